import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/load.js";

// PATH a symlink (outside any repository) to a directory or file of a repository whose Environment
// documents are above it (docs/environments.md "A directory as PATH"): the scan starts from where
// the link leads, as `cd LINK && plumb plan . --env prod` (the shell's working directory is the
// real one) and git have it. It walked the link's own parents, found no repository, and refused
// --env ("no kind: Environment document is defined under PATH, nor above it").

let dir: string;
let repo: string;

const ENVIRONMENT =
  "apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: prod}\nspec:\n  api_url: https://a.example\n  api_key: {env: K}\n";
const DEPLOYMENT =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: img/a:1}\n";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-env-symlink-path-"));
  repo = join(dir, "repo");
  await mkdir(join(repo, "environments"), { recursive: true });
  await mkdir(join(repo, "agents"));
  execFileSync("git", ["init", "-q", repo]);
  await writeFile(join(repo, "environments", "prod.yaml"), ENVIRONMENT);
  await writeFile(join(repo, "agents", "a.yaml"), DEPLOYMENT);
  await mkdir(join(dir, "elsewhere"));
  await symlink(join(repo, "agents"), join(dir, "elsewhere", "agents"));
  // A linked file is read only when it leads below the link's own directory (list-tree.ts).
  await symlink(join(repo, "agents", "a.yaml"), join(dir, "a.yaml"));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const asked = { environmentsAbove: true, environmentRequested: true };
const names = (tree: Awaited<ReturnType<typeof loadManifests>>) =>
  tree.environments?.map((e) => e.manifest.metadata.name) ?? [];

describe("--env on a PATH that is a link into a repository", () => {
  it("a linked directory runs with the Environment documents above where it leads", async () => {
    const tree = await loadManifests(join(dir, "elsewhere", "agents"), asked);
    expect(tree.problems).toEqual([]);
    expect(names(tree)).toEqual(["prod"]);
    expect(tree.manifests.map((m) => m.manifest.metadata.name)).toContain("a");
  });

  it("a linked file too", async () => {
    const tree = await loadManifests(join(dir, "a.yaml"), asked);
    expect(tree.problems).toEqual([]);
    expect(names(tree)).toEqual(["prod"]);
  });

  it("the directory the link is in is not read for them (it is outside any repository)", async () => {
    await writeFile(join(dir, "elsewhere", "stray.yaml"), ENVIRONMENT.replace("prod", "stray"));
    try {
      expect(names(await loadManifests(join(dir, "elsewhere", "agents"), asked))).toEqual(["prod"]);
    } finally {
      await rm(join(dir, "elsewhere", "stray.yaml"));
    }
  });
});
