import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import type { FieldChange, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { SOURCE_TARBALL_FIELD } from "../../src/diff/plan/plan-types.js";
import { fingerprintSecrets } from "../../src/diff/secrets/secret-fingerprint.js";
import { classifyFields } from "../../src/diff/three-way.js";
import { MASKED_SECRET_VALUE } from "../../src/schema/deployment.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { desiredDeployment, liveDeployment } from "./helpers.js";

// Which side moved, for the fields with rules of their own: the secret list (by names and the
// fingerprints of the values last applied) and the source upload (by what plumb last uploaded).

const image: DeploymentSpec = {
  source: "internal_container",
  source_revision_config: { image_uri: "img:1" },
};
const masked = (...names: string[]) => names.map((name) => ({ name, value: MASKED_SECRET_VALUE }));
const secret = (name: string, value = `${name.toLowerCase()}-value`) => ({ name, value });

/** The origin of the secrets field: git's list, live's names, and the list last applied (its fingerprints). */
function secretsOrigin(
  git: { name: string; value: string }[],
  liveNames: string[],
  applied: { name: string; value: string }[] | "no fingerprints",
): PlannedChange["fields"] {
  const fingerprints = applied === "no fingerprints" ? undefined : fingerprintSecrets(applied, "salt");
  return buildPlan({
    desired: [desiredDeployment("web", { ...image, secrets: git })],
    live: { deployments: [liveDeployment({ name: "web", ...image, secrets: masked(...liveNames) })] },
    fingerprints: () => fingerprints,
    applied: () => ({
      spec: { ...image, secrets: applied === "no fingerprints" ? [] : applied },
      fingerprints,
    }),
  }).changes[0]!.fields!.filter((f) => f.field === "secrets");
}

const origin = (fields: PlannedChange["fields"]) => fields?.map((f) => f.origin);

describe("three-way: the secret list", () => {
  it("git added a secret (live as last applied): change", () => {
    expect(origin(secretsOrigin([secret("A"), secret("C")], ["A"], [secret("A")]))).toEqual(["change"]);
  });

  it("git changed a value (same names): change", () => {
    expect(origin(secretsOrigin([secret("A", "new")], ["A"], [secret("A", "old")]))).toEqual(["change"]);
  });

  it("live gained a secret, git is as last applied: drift, whatever order the record lists names in", () => {
    const applied = [secret("B"), secret("A")]; // recorded B first
    expect(origin(secretsOrigin([secret("A"), secret("B")], ["A", "B", "X"], applied))).toEqual(["drift"]);
  });

  it("live lost a secret that git and the last apply still have: drift (docs/status.md)", () => {
    const applied = [secret("A"), secret("B")];
    expect(origin(secretsOrigin([secret("A"), secret("B")], ["A"], applied))).toEqual(["drift"]);
    expect(origin(secretsOrigin([secret("A"), secret("B")], ["A", "X"], applied))).toEqual(["drift"]);
  });

  it("live lost a secret whose value git changed: conflict", () => {
    const applied = [secret("A"), secret("B", "old")];
    expect(origin(secretsOrigin([secret("A"), secret("B", "new")], ["A"], applied))).toEqual(["conflict"]);
  });

  it("git replaced a secret while live lost it: conflict", () => {
    const out = secretsOrigin([secret("A"), secret("C")], ["A"], [secret("A"), secret("B")]);
    expect(origin(out)).toEqual(["conflict"]);
  });

  it("git changed a value while live gained a secret: conflict", () => {
    expect(origin(secretsOrigin([secret("A", "new")], ["A", "X"], [secret("A", "old")]))).toEqual([
      "conflict",
    ]);
  });

  it("git dropped a secret while live swapped it for another: conflict", () => {
    expect(origin(secretsOrigin([secret("A")], ["A", "X"], [secret("A"), secret("B")]))).toEqual([
      "conflict",
    ]);
  });

  it("both moved: conflict", () => {
    expect(origin(secretsOrigin([secret("A"), secret("C")], ["A", "B"], [secret("A")]))).toEqual([
      "conflict",
    ]);
  });

  it("no fingerprints recorded: git's list is the change", () => {
    expect(origin(secretsOrigin([secret("A")], ["A", "B"], "no fingerprints"))).toEqual(["change"]);
  });
});

describe("three-way: the source upload", () => {
  const A = `sha256:${"a".repeat(64)}`;
  const B = `sha256:${"b".repeat(64)}`;
  const spec: DeploymentSpec = {
    source: "internal_source",
    source_path: "./app",
    source_revision_config: { graph_config_path: "langgraph.json" },
  };
  function uploadOrigin(desiredDigest: string, recorded: { digest: string; object_path: string }) {
    const live = liveDeployment({
      name: "app",
      source: "internal_source",
      source_revision_config: {
        graph_config_path: "langgraph.json",
        source_tarball_path: "uploads/live.tar.gz",
      },
    });
    return buildPlan({
      desired: [
        { ...desiredDeployment("app", spec), source: { source_path: "./app", digest: desiredDigest } },
      ],
      live: { deployments: [live] },
      sources: () => recorded,
      applied: () => ({ spec, fingerprints: undefined }),
    }).changes[0]!.fields!.filter((f) => f.field === SOURCE_TARBALL_FIELD);
  }

  it("git's content changed over plumb's own upload: change", () => {
    expect(origin(uploadOrigin(B, { digest: A, object_path: "uploads/live.tar.gz" }))).toEqual(["change"]);
  });

  it("the live tarball replaced outside plumb, git unchanged: drift", () => {
    expect(origin(uploadOrigin(A, { digest: A, object_path: "uploads/ours.tar.gz" }))).toEqual(["drift"]);
  });

  it("replaced outside plumb and changed in git: conflict", () => {
    expect(origin(uploadOrigin(B, { digest: A, object_path: "uploads/ours.tar.gz" }))).toEqual(["conflict"]);
  });
});

describe("classifyFields", () => {
  const fields: FieldChange[] = [
    { field: "source_revision_config.image_uri", class: "revision", old: "img:1", new: "img:2" },
  ];
  const change = {};

  it("an unknown base makes every field unknown, without diffing any spec", () => {
    let diffed = 0;
    const liveMoved = () => ((diffed += 1), []);
    expect(classifyFields(change, fields, liveMoved, "unknown").map((f) => f.origin)).toEqual(["unknown"]);
    expect(diffed).toBe(0);
  });

  it("a record this version cannot read as a spec makes every field unknown", () => {
    const unreadable = () => {
      throw new TypeError("not a spec");
    };
    const out = classifyFields(change, fields, unreadable, { spec: {}, fingerprints: undefined });
    expect(out.map((f) => f.origin)).toEqual(["unknown"]);
  });

  it("nothing differs: nothing to classify, and the last applied spec is not diffed", () => {
    let diffed = 0;
    const liveMoved = () => ((diffed += 1), []);
    expect(classifyFields(change, [], liveMoved, { spec: {}, fingerprints: undefined })).toEqual([]);
    expect(diffed).toBe(0);
  });

  it("never applied: the fields as they are, a copy without origins", () => {
    const out = classifyFields(change, fields, () => [], undefined);
    expect(out).toEqual(fields);
    expect(out).not.toBe(fields);
  });
});
