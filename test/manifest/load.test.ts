import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { resolveTree } from "../../src/environment/resolve-tree.js";
import { loadManifests } from "../../src/manifest/load.js";
import { MAX_MANIFEST_BYTES } from "../../src/manifest/parse/parse.js";
import { useTempRoots } from "./helpers.js";

const EXAMPLES = fileURLToPath(new URL("../../examples", import.meta.url));
const deployment = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n`;

const t = useTempRoots("plumb-load-");
const { put } = t;

describe("loadManifests", () => {
  it("reads .yaml and .yml files recursively, skipping node_modules, .git and .plumb", async () => {
    await put("a.yaml", deployment("a"));
    await put("team/b.yml", `${deployment("b")}---\n${deployment("c")}`);
    await put("notes.txt", deployment("ignored"));
    for (const dir of ["node_modules/x", ".git", ".plumb"]) await put(`${dir}/d.yaml`, "{{{ broken");
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems).toEqual([]);
    expect(manifests.map((m) => `${m.file}:${m.location.line}`)).toEqual([
      "a.yaml:2",
      "team/b.yml:2",
      "team/b.yml:9",
    ]);
  });

  it("reports files across the tree with relative paths, sorted", async () => {
    await put("z.yaml", deployment("dup"));
    await put("a/a.yaml", deployment("dup"));
    await put("m.yaml", "");
    const { problems } = await loadManifests(t.root);
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}`)).toEqual([
      "m.yaml:1:1 empty-file",
      "z.yaml:4:9 duplicate-name",
    ]);
  });

  it("refuses symlinks that leave the root, follows those inside, survives loops", async () => {
    await writeFile(join(t.outside, "secret.yaml"), deployment("outside"));
    await put("real/a.yaml", deployment("a"));
    await symlink(join(t.outside, "secret.yaml"), join(t.root, "escape.yaml"));
    await symlink(t.outside, join(t.root, "escape-dir"));
    await symlink(join(t.root, "real"), join(t.root, "alias"));
    await symlink(t.root, join(t.root, "real", "loop"));
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems.map((p) => `${p.file} ${p.code}`)).toEqual([
      "escape-dir symlink-outside-root",
      "escape.yaml symlink-outside-root",
    ]);
    expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
  });

  it("oversized and non-UTF-8 files become problems", async () => {
    await put("big.yaml", `# ${"x".repeat(MAX_MANIFEST_BYTES)}\n`);
    await put("latin1.yaml", new Uint8Array([0x6b, 0x3a, 0x20, 0xe9, 0x0a]));
    const { problems } = await loadManifests(t.root);
    expect(problems.map((p) => `${p.file} ${p.code}`)).toEqual([
      "big.yaml manifest-too-large",
      "latin1.yaml invalid-encoding",
    ]);
  });

  it("accepts a single file", async () => {
    await put("one.yaml", deployment("one"));
    const { manifests } = await loadManifests(join(t.root, "one.yaml"));
    expect(manifests.map((m) => m.file)).toEqual(["one.yaml"]);
  });

  it("a missing path is a typed error", async () => {
    await expect(loadManifests(join(t.root, "nope"))).rejects.toSatisfy(
      (e) => e instanceof PlumbError && e.code === "path-not-found",
    );
  });
});

describe("the examples", () => {
  it("validate cleanly in each of their three environments", async () => {
    const tree = await loadManifests(EXAMPLES);
    expect(tree.problems).toEqual([]);
    expect(tree.environments?.map((e) => e.manifest.metadata.name).sort()).toEqual([
      "onprem",
      "prod",
      "staging",
    ]);
    const names = (env: string) =>
      resolveTree(tree, env)
        .selected.map((m) => m.manifest.metadata.name)
        .sort();
    expect(resolveTree(tree, "prod").problems).toEqual([]);
    expect(names("staging")).toEqual([
      "acme",
      "docs-agent-staging",
      "support-agent-staging",
      "triage-agent-staging",
    ]);
    expect(names("prod")).toEqual(["acme", "docs-agent", "research-agent", "support-agent", "triage-agent"]);
    expect(names("onprem")).toEqual(["acme", "billing-agent", "ops-agent"]);
  });

  it("define each agent once: no file is a copy of another with a few lines changed", async () => {
    const { manifests } = await loadManifests(EXAMPLES);
    const sources = manifests.flatMap((m) => {
      if (m.manifest.kind !== "Deployment") return [];
      const { source_config: config, source_revision_config: revision } = m.manifest.spec;
      return [
        config?.repo_url ?? revision?.image_uri?.replace(/:[^:/]+$/, "") ?? m.manifest.spec.source_path,
      ];
    });
    expect(sources.every((s) => s !== undefined)).toBe(true);
    expect(new Set(sources).size).toBe(sources.length);
  });

  it("cover every source, an OrganizationAccess and verify blocks", async () => {
    const { manifests } = await loadManifests(EXAMPLES);
    const sources = new Set(
      manifests.map((m) => (m.manifest.kind === "Deployment" ? m.manifest.spec.source : m.manifest.kind)),
    );
    expect([...sources].sort()).toEqual([
      "OrganizationAccess",
      "external_container",
      "gitrepo",
      "internal_container",
      "internal_source",
    ]);
    const verified = manifests.filter(
      (m) => m.manifest.kind === "Deployment" && m.manifest.spec.verify?.assistant_id === "agent",
    );
    expect(verified.length).toBeGreaterThanOrEqual(3);
  });
});
