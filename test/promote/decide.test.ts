import { describe, expect, it } from "vitest";
import type { LoadedManifest } from "../../src/manifest/types.js";
import { decidePromotion } from "../../src/promote/decide.js";
import type { SourceFacts } from "../../src/promote/gates.js";
import type { Deployment } from "../../src/schema/deployment.js";
import type { DeploymentManifest } from "../../src/schema/manifest.js";
import type { Revision } from "../../src/schema/revision.js";

// One deployment's promotion decided from the source revision, the two resolved specs, the pin
// rule and the gates: what is copied, and why not.

const loaded = (spec: Record<string, unknown>, name = "docs-agent") =>
  ({
    manifest: { apiVersion: "plumb/v1", kind: "Deployment", metadata: { name }, spec },
    file: "docs-agent.yaml",
    location: { file: "docs-agent.yaml", line: 1, column: 1 },
    locate: () => ({ file: "docs-agent.yaml", line: 1, column: 1 }),
  }) as unknown as LoadedManifest<DeploymentManifest>;

const revision = (config: Revision["source_revision_config"], source = "external_container"): Revision => ({
  id: "rev-9",
  status: "DEPLOYED",
  source,
  created_at: "2026-11-25T10:00:00.000Z",
  updated_at: "2026-11-25T10:01:00.000Z",
  source_revision_config: config,
  status_message: null,
});

const facts = (rev: Revision): SourceFacts => ({
  deployment: {
    id: "d",
    name: "docs-agent-staging",
    latest_revision_id: rev.id,
    active_revision_id: rev.id,
  } as Deployment,
  revision: rev,
  change: { action: "noop", fields: [], revision_fields: [], in_place_fields: [] },
  pending: false,
  checks: null,
  now: { ms: Date.parse("2026-11-25T12:00:00.000Z"), from: "control plane" },
});

const decide = (
  source: Record<string, unknown>,
  target: Record<string, unknown>,
  rev: Revision,
  digest: string | null = null,
) =>
  decidePromotion({
    pair: { name: "docs-agent", file: "docs-agent.yaml", source: loaded(source), target: loaded(target) },
    from: "staging",
    to: "prod",
    gates: { soak: "1h" },
    facts: facts(rev),
    sourceDigest: digest,
  });

const container = (image: string) => ({
  source: "external_container",
  source_revision_config: { image_uri: image },
});

describe("decidePromotion", () => {
  it("copies the revision's image_uri into the target's override, with the evidence", () => {
    const item = decide(
      container("r/docs:2.0.0"),
      container("r/docs:1.9.0"),
      revision({ image_uri: "r/docs:2.0.0" }),
    );
    expect(item.outcome).toBe("promoted");
    expect(item.fields).toEqual([
      { field: "source_revision_config.image_uri", from: "r/docs:1.9.0", to: "r/docs:2.0.0" },
    ]);
    expect(item.edits).toEqual([
      {
        kind: "Deployment",
        name: "docs-agent",
        path: ["environments", "prod", "spec", "source_revision_config", "image_uri"],
        value: "r/docs:2.0.0",
      },
    ]);
    expect(item.evidence).toEqual({
      environment: "staging",
      deployment: "docs-agent-staging",
      revision_id: "rev-9",
      revision_status: "DEPLOYED",
      deployed_at: "2026-11-25T10:01:00.000Z",
      repo_commit_sha: null,
      source_digest: null,
    });
  });

  it("copies what the revision was built from, not what the source's git says now", () => {
    const item = decide(
      container("r/docs:2.1.0"),
      container("r/docs:1.9.0"),
      revision({ image_uri: "r/docs:2.0.0" }),
    );
    expect(item.fields.map((f) => f.to)).toEqual(["r/docs:2.0.0"]);
  });

  it("a target already at that version is current, whatever the gates say", () => {
    const rev = { ...revision({ image_uri: "r/docs:2.0.0" }), status: "BUILDING" as const };
    const item = decide(container("r/docs:2.0.0"), container("r/docs:2.0.0"), rev);
    expect(item).toMatchObject({ outcome: "current", reasons: [], edits: [] });
  });

  it("an untagged or latest image is unpinned; a failing gate is listed too; nothing to edit", () => {
    const item = decide(
      container("r/docs:latest"),
      container("r/docs:1.9.0"),
      revision({ image_uri: "r/docs:latest" }),
    );
    expect(item.outcome).toBe("unpinned");
    expect(item.edits).toEqual([]);
    expect(item.reasons[0]).toContain('image_uri "r/docs:latest" has the tag latest');
  });

  it("a failing gate blocks a pinned version", () => {
    const rev = { ...revision({ image_uri: "r/docs:2.0.0" }), updated_at: "2026-11-25T11:30:00.000Z" };
    const item = decide(container("r/docs:2.0.0"), container("r/docs:1.9.0"), rev);
    expect(item.outcome).toBe("blocked");
    expect(item.reasons).toEqual([
      "soak: deployed 30m ago (at 2026-11-25T11:30:00.000Z, control plane); 1h needed",
    ]);
  });

  it("unlike sources are blocked (promote like for like)", () => {
    const item = decide(
      container("r/docs:2.0.0"),
      { source: "gitrepo" },
      revision({ image_uri: "r/docs:2.0.0" }),
    );
    expect(item.outcome).toBe("blocked");
    expect(item.reasons[0]).toContain("the source is external_container there and gitrepo here");
  });

  it("internal_source: the source's directory is copied (never the tarball path), its digest in the evidence", () => {
    const spec = (path: string) => ({
      source: "internal_source",
      source_path: path,
      source_revision_config: { graph_config_path: "langgraph.json" },
    });
    const rev = revision(
      { graph_config_path: "langgraph.json", source_tarball_path: "uploads/t1" },
      "internal_source",
    );
    const item = decide(spec("./agent-v2"), spec("./agent"), rev, "sha256:abc");
    expect(item.outcome).toBe("promoted");
    expect(item.fields).toEqual([{ field: "source_path", from: "./agent", to: "./agent-v2" }]);
    expect(item.edits[0]!.path).toEqual(["environments", "prod", "spec", "source_path"]);
    expect(item.evidence.source_digest).toBe("sha256:abc");
    expect(decide(spec("./agent"), spec("./agent"), rev).outcome).toBe("current");
  });
});
