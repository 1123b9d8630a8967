import { chmod, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { loadManifests } from "../../src/manifest/load.js";
import { digestSource, shortDigest, type SourceFile } from "../../src/manifest/source-digest.js";
import { readSourceTree } from "../../src/manifest/source-tree.js";
import { useTempRoots } from "./helpers.js";
import type { LoadedManifest } from "../../src/manifest/types.js";
import type { DeploymentManifest } from "../../src/schema/manifest.js";

const t = useTempRoots("plumb-source-");
const { put } = t;

async function load(sourcePath = "../agent"): Promise<LoadedManifest<DeploymentManifest>> {
  await put(
    "team/docs.yaml",
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: docs}\nspec:\n  source: internal_source\n  source_path: ${sourcePath}\n  source_revision_config: {graph_config_path: langgraph.json}\n`,
  );
  const { manifests, problems } = await loadManifests(t.root);
  expect(problems).toEqual([]);
  return manifests[0] as LoadedManifest<DeploymentManifest>;
}

const failure = async (promise: Promise<unknown>): Promise<PlumbError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlumbError);
  expect((error as PlumbError).code).toBe("source-unreadable");
  return error as PlumbError;
};

const file = (path: string, text: string, mode: 0o644 | 0o755 = 0o644): SourceFile => ({
  path,
  mode,
  bytes: Buffer.from(text),
});

describe("digestSource", () => {
  const base = [file("package.json", "{}"), file("src/agent.ts", "export {}")];

  it("is sha256 over sorted paths, modes, sizes and contents; listing order does not matter", () => {
    const digest = digestSource(base);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digestSource([...base].reverse())).toBe(digest);
  });

  it("changes with a content byte, a path, the mode, or a moved boundary between path and content", () => {
    const digest = digestSource(base);
    expect(digestSource([file("package.json", "{ }"), base[1]!])).not.toBe(digest);
    expect(digestSource([file("package.json", "{}"), file("src/agent.js", "export {}")])).not.toBe(digest);
    expect(digestSource([file("package.json", "{}", 0o755), base[1]!])).not.toBe(digest);
    expect(digestSource([file("a", "bc")])).not.toBe(digestSource([file("ab", "c")]));
  });

  it("is shortened for display", () => {
    expect(shortDigest(`sha256:${"ab".repeat(32)}`)).toBe("sha256:abababababab…");
  });
});

describe("readSourceTree", () => {
  it("reads every file under source_path, relative to the manifest, skipping .git, node_modules and .plumb", async () => {
    await put("agent/package.json", "{}");
    await put("agent/src/agent.ts", "export const graph = 1;\n");
    await put("agent/bin/run.sh", "#!/bin/sh\n");
    await chmod(join(t.root, "agent/bin/run.sh"), 0o700);
    await put("agent/.git/HEAD", "ref: refs/heads/main\n");
    await put("agent/node_modules/x/index.js", "");
    await put("agent/src/node_modules/y/index.js", "");
    await put("agent/.plumb/status/x.json", "{}");
    const tree = await readSourceTree(await load(), { root: t.root, withBytes: true });
    expect(tree.files.map((f) => `${f.path} ${f.mode.toString(8)}`)).toEqual([
      "bin/run.sh 755",
      "package.json 644",
      "src/agent.ts 644",
    ]);
    expect(tree.size).toBe(2 + 24 + 10);
    expect(tree.digest).toBe(digestSource(tree.files));
    // Without bytes (plan): the same digest, nothing held.
    const light = await readSourceTree(await load(), { root: t.root });
    expect([light.digest, light.files.length]).toEqual([tree.digest, 0]);
    // Ignored directories and timestamps are not content.
    await put("agent/node_modules/x/index.js", "changed");
    expect((await readSourceTree(await load(), { root: t.root })).digest).toBe(tree.digest);
    await put("agent/src/agent.ts", "export const graph = 2;\n");
    expect((await readSourceTree(await load(), { root: t.root })).digest).not.toBe(tree.digest);
  });

  it("follows symlinks that stay inside the root", async () => {
    await put("shared/prompt.txt", "be brief");
    await put("agent/package.json", "{}");
    await symlink(join(t.root, "shared/prompt.txt"), join(t.root, "agent/prompt.txt"));
    await symlink(join(t.root, "shared"), join(t.root, "agent/shared"));
    const tree = await readSourceTree(await load(), { root: t.root, withBytes: true });
    expect(tree.files.map((f) => f.path)).toEqual(["package.json", "prompt.txt", "shared/prompt.txt"]);
  });

  it("refuses symlinks out of the root, with file:line:col", async () => {
    await put("agent/package.json", "{}");
    const loaded = await load();
    const linked = await load("../linked");
    await writeFile(join(t.outside, "key.pem"), "secret");
    await symlink(join(t.outside, "key.pem"), join(t.root, "agent/key.pem"));
    const error = await failure(readSourceTree(loaded, { root: t.root }));
    expect(error.message).toBe(
      "team/docs.yaml:6:3: source_path agent/key.pem leads outside the manifest root through a symlink",
    );
    await rm(join(t.root, "agent/key.pem"));
    await symlink(t.outside, join(t.root, "agent/escape"));
    expect((await failure(readSourceTree(loaded, { root: t.root }))).message).toContain(
      "source_path agent/escape leads outside the manifest root through a symlink",
    );
    await symlink(t.outside, join(t.root, "linked"));
    expect((await failure(readSourceTree(linked, { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path linked leads outside the manifest root through a symlink",
    );
  });

  it("says clearly when the directory is missing, not a directory, empty or too big", async () => {
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent does not exist",
    );
    await put("agent", "a file");
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toContain(
      "agent is not a directory",
    );
    await rm(join(t.root, "agent"));
    await mkdir(join(t.root, "agent/node_modules"), { recursive: true });
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toContain(
      "agent holds no files",
    );
    await put("agent/a.bin", "x".repeat(600));
    await put("agent/b.bin", "x".repeat(600));
    expect((await failure(readSourceTree(await load(), { root: t.root, maxBytes: 1_000 }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent is over 0.0 MiB; keep build outputs and dependencies out of it",
    );
    expect((await failure(readSourceTree(await load(), { root: t.root, maxFiles: 1 }))).message).toContain(
      "holds more than 1 files",
    );
  });
});
