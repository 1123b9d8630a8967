import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  environmentFilesAbove,
  environmentFilesFor,
  mayDefineEnvironments,
} from "../../src/manifest/environment-scan.js";
import { loadManifests } from "../../src/manifest/load.js";
import { listManifestFiles } from "../../src/manifest/list-tree.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-env-scan-"));
  await mkdir(join(dir, "plain"));
  await mkdir(join(dir, "envs", "nested"), { recursive: true });
  await mkdir(join(dir, "ignored", ".plumb"), { recursive: true });
  await writeFile(
    join(dir, "plain", "a.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\n# kind: Environment in a comment\n",
  );
  await writeFile(
    join(dir, "envs", "nested", "prod.yml"),
    "apiVersion: plumb/v1\nkind: Environment # prod\n",
  );
  await writeFile(join(dir, "ignored", ".plumb", "x.yaml"), "kind: Environment\n");
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe("the quick scan for Environment documents", () => {
  it("finds one in a nested file, and none in a tree without (comments, .plumb/ not counted)", async () => {
    expect(await mayDefineEnvironments(dir)).toBe(true);
    expect(await mayDefineEnvironments(join(dir, "envs", "nested", "prod.yml"))).toBe(true);
    expect(await mayDefineEnvironments(join(dir, "plain"))).toBe(false);
    expect(await mayDefineEnvironments(join(dir, "ignored"))).toBe(false);
    expect(await mayDefineEnvironments(join(dir, "missing"))).toBe(false);
  });

  it("reads no file larger than the load accepts (it is refused there, unread)", async () => {
    const big = await mkdtemp(join(tmpdir(), "plumb-env-scan-big-"));
    try {
      await writeFile(join(big, "huge.yaml"), `kind: Environment\n${"#".repeat(4096)}\n`);
      expect(await mayDefineEnvironments(big, { maxBytes: 1024 })).toBe(false);
      expect(await mayDefineEnvironments(big, { maxBytes: 8192 })).toBe(true);
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });
});

// A single manifest file runs with the Environment documents of the nearest directory tree that
// has any, from its own directory up to its git repository's root (docs/environments.md).

const ENV = "apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: prod}\n";
const DEPLOYMENT = "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\n";
/** A deployment that names its environments (metadata.environments). */
const NAMING = "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: a\n  environments: [prod]\n";

let root: string;

async function put(path: string, text: string) {
  await mkdir(join(root, path, ".."), { recursive: true });
  await writeFile(join(root, path), text);
}

describe("environmentFilesFor", () => {
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-env-scan-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("finds the nearest ancestor's tree that defines environments, up to the git root", async () => {
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/environments/prod.yaml", ENV);
    await put("repo/environments/staging.yml", ENV.replace("prod", "staging"));
    await put("repo/teams/saas/a.yaml", NAMING);
    await put("repo/teams/saas/b.yaml", DEPLOYMENT.replace("{name: a}", "{name: b}"));
    // b names no environment: another folder's Environment documents never decide where it goes.
    expect((await environmentFilesFor(join(root, "repo/teams/saas/b.yaml"))).files).toEqual([]);
    expect(await mayDefineEnvironments(join(root, "repo/teams/saas/b.yaml"))).toBe(false);
    expect((await environmentFilesFor(join(root, "repo/teams/saas/a.yaml"))).files).toEqual([
      join(root, "repo/environments/prod.yaml"),
      join(root, "repo/environments/staging.yml"),
    ]);
    expect(await mayDefineEnvironments(join(root, "repo/teams/saas/a.yaml"))).toBe(true);
    // A nearer tree with environments wins over the repository's.
    await put("repo/teams/envs/qa.yaml", ENV.replace("prod", "qa"));
    expect((await environmentFilesFor(join(root, "repo/teams/saas/a.yaml"))).files).toEqual([
      join(root, "repo/teams/envs/qa.yaml"),
    ]);
  });

  it("stops at the git root, and outside git looks only in the file's own directory", async () => {
    await put("environments/prod.yaml", ENV); // above the repository: never read
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/a.yaml", NAMING);
    expect((await environmentFilesFor(join(root, "repo/a.yaml"))).files).toEqual([]);
    expect(await mayDefineEnvironments(join(root, "repo/a.yaml"))).toBe(false);
    await put("loose/a.yaml", NAMING);
    expect((await environmentFilesFor(join(root, "loose/a.yaml"))).files).toEqual([]);
  });

  it("outside git, reads the files of its own directory, never the tree below it (other projects)", async () => {
    // A file in /tmp or $HOME: below its directory are other people's clones with environments.
    await put("tmp/a.yaml", NAMING);
    await put("tmp/someone-elses-clone/environments/prod.yaml", ENV);
    expect((await environmentFilesFor(join(root, "tmp/a.yaml"))).files).toEqual([]);
    expect(await mayDefineEnvironments(join(root, "tmp/a.yaml"))).toBe(false);
    await put("tmp/prod.yaml", ENV); // beside it: the file's own environments
    expect((await environmentFilesFor(join(root, "tmp/a.yaml"))).files).toEqual([
      join(root, "tmp/prod.yaml"),
    ]);
    // In a repository, the file's directory's tree is read as before (bounded by the repository).
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/a.yaml", NAMING);
    await put("repo/envs/prod.yaml", ENV);
    expect((await environmentFilesFor(join(root, "repo/a.yaml"))).files).toEqual([
      join(root, "repo/envs/prod.yaml"),
    ]);
  });

  it("an Environment file itself runs with its siblings, itself left out", async () => {
    await mkdir(join(root, ".git"));
    await put("environments/prod.yaml", ENV);
    await put("environments/staging.yaml", ENV.replace("prod", "staging"));
    expect((await environmentFilesFor(join(root, "environments/prod.yaml"))).files).toEqual([
      join(root, "environments/staging.yaml"),
    ]);
  });
});

// A directory as PATH whose own tree defines no Environment runs, when its manifests name
// environments, with those above it, by the same rule from its parent (docs/environments.md).
const VALID_ENV = (name: string) =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec: {api_url: "http://127.0.0.1:9", api_key: {env: K}, mode: saas}\n`;
const VALID_NAMING = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: a, environments: [prod]}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img:1"}
`;

describe("environmentFilesAbove and a directory's load", () => {
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-env-scan-"));
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/environments/prod.yaml", VALID_ENV("prod"));
    await put("repo/teams/saas/a.yaml", VALID_NAMING);
    await put("repo/teams/plain/b.yaml", DEPLOYMENT.replace("{name: a}", "{name: b}"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("finds the nearest tree above, up to the git root; none at the root or outside git", async () => {
    expect((await environmentFilesAbove(join(root, "repo/teams/saas"))).files).toEqual([
      join(root, "repo/environments/prod.yaml"),
    ]);
    expect((await environmentFilesAbove(join(root, "repo"))).files).toEqual([]);
    await put("loose/envs/prod.yaml", ENV);
    await put("loose/agents/a.yaml", NAMING);
    expect((await environmentFilesAbove(join(root, "loose/agents"))).files).toEqual([]);
  });

  it("the quick scan says so only for a directory whose manifests name environments, when asked", async () => {
    expect(await mayDefineEnvironments(join(root, "repo/teams/saas"), { above: true })).toBe(true);
    expect(await mayDefineEnvironments(join(root, "repo/teams/saas"))).toBe(false); // the controller's
    expect(await mayDefineEnvironments(join(root, "repo/teams/plain"), { above: true })).toBe(false);
  });

  it("the commands' load validates the directory with them; without the option, unknown-environment", async () => {
    const saas = join(root, "repo/teams/saas");
    const above = await loadManifests(saas, { environmentsAbove: true });
    expect(above.problems).toEqual([]);
    expect(above.manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
    expect(above.environments?.map((e) => [e.file, e.manifest.metadata.name])).toEqual([
      ["../../environments/prod.yaml", "prod"],
    ]);
    const own = await loadManifests(saas);
    expect(own.problems.map((p) => p.code)).toEqual(["unknown-environment"]);
    // A problem in a file above is reported, under its path from the directory.
    await put(
      "repo/environments/prod.yaml",
      VALID_ENV("prod").replace("mode: saas", "mode: saas, colour: 1"),
    );
    const broken = await loadManifests(saas, { environmentsAbove: true });
    expect(broken.problems.map((p) => [p.file, p.severity])).toContainEqual([
      "../../environments/prod.yaml",
      "error",
    ]);
    // A directory that defines its own Environment reads no other.
    await put("repo/teams/saas/envs/qa.yaml", VALID_ENV("qa"));
    const local = await loadManifests(saas, { environmentsAbove: true });
    expect(local.environments?.map((e) => e.manifest.metadata.name)).toEqual(["qa"]);
    expect(local.problems.map((p) => p.code)).toEqual(["unknown-environment"]); // prod is not qa
  });
});

// The scan above PATH lists what the load lists (list-tree.ts). It read directories itself: one it
// could not read ended every command with io-error (the listing names it and goes on), and a
// symlinked *.yaml file or directory (which the listing follows inside the tree) was not seen.
describe("the scan above PATH lists as the manifest listing does", () => {
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-env-scan-"));
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/teams/saas/a.yaml", VALID_NAMING);
  });
  afterEach(() => {
    execFileSync("rm", ["-rf", root]); // rm walks what fs.rm cannot (paths over PATH_MAX)
  });

  it("a directory it cannot read is a warning naming it; the Environments beside it are found", async () => {
    await put("repo/environments/prod.yaml", VALID_ENV("prod"));
    // Unreadable even for root: a directory whose path is longer than PATH_MAX (ENAMETOOLONG),
    // made short and each level renamed long from the bottom up (each rename's path stays short).
    const levels = 18;
    await mkdir(join(root, "repo", "deep", ...Array<string>(levels).fill("d")), { recursive: true });
    for (let depth = levels; depth >= 1; depth--) {
      const parent = join(root, "repo", "deep", ...Array<string>(depth - 1).fill("d"));
      await rename(join(parent, "d"), join(parent, "l".repeat(250)));
    }
    const saas = join(root, "repo/teams/saas");
    const found = await environmentFilesAbove(saas);
    expect(found.files).toEqual([join(root, "repo/environments/prod.yaml")]);
    expect(found.problems.map((p) => [p.severity, p.code, p.file.slice(0, 14)])).toEqual([
      ["warning", "manifest-unreadable", "../../deep/lll"],
    ]);
    expect(found.problems[0]?.message).toContain("its Environment documents, if any, are not read");
    const loaded = await loadManifests(saas, { environmentsAbove: true });
    expect(loaded.environments?.map((e) => e.manifest.metadata.name)).toEqual(["prod"]);
    expect(loaded.problems.map((p) => [p.severity, p.code])).toEqual([["warning", "manifest-unreadable"]]);
    expect(await mayDefineEnvironments(saas, { above: true })).toBe(true);
  });

  it("follows a symlinked *.yaml file and a symlinked directory inside the tree, as the load of that tree", async () => {
    await put("repo/shared/prod.yaml", VALID_ENV("prod"));
    await mkdir(join(root, "repo/environments"));
    await symlink("../shared/prod.yaml", join(root, "repo/environments/prod.yaml"));
    await put("repo/z-config/envs/staging.yaml", VALID_ENV("staging"));
    await symlink("z-config/envs", join(root, "repo/a-envs")); // listed first: read through the link
    const listed = ["a-envs/staging.yaml", "environments/prod.yaml", "shared/prod.yaml"];
    const saas = join(root, "repo/teams/saas");
    expect((await environmentFilesAbove(saas)).files).toEqual(listed.map((f) => join(root, "repo", f)));
    const tree = await listManifestFiles(join(root, "repo"), {});
    expect(tree.files.map((f) => f.path)).toEqual(
      expect.arrayContaining(listed.map((f) => join(root, "repo", f))),
    );
  });

  it("a file outside any repository: its directory's symlinked Environment, no tree below", async () => {
    await put("loose/a.yaml", NAMING);
    await put("loose/real/prod.yml", ENV);
    await symlink("real/prod.yml", join(root, "loose/prod.yaml"));
    expect((await environmentFilesFor(join(root, "loose/a.yaml"))).files).toEqual([
      join(root, "loose/prod.yaml"),
    ]);
  });

  it("reads each file once, PATH's own included", async () => {
    await put("repo/environments/prod.yaml", VALID_ENV("prod"));
    await put("repo/teams/saas/b.yaml", VALID_NAMING.replace("name: a", "name: b"));
    const reads = new Map<string, number>();
    const readText = (file: string) => {
      reads.set(file, (reads.get(file) ?? 0) + 1);
      return readFileSync(file, "utf8");
    };
    const saas = join(root, "repo/teams/saas");
    expect(await mayDefineEnvironments(saas, { above: true, readText })).toBe(true);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect([...reads.keys()].sort()).toEqual(
      ["environments/prod.yaml", "teams/saas/a.yaml", "teams/saas/b.yaml"].map((f) => join(root, "repo", f)),
    );
    reads.clear();
    expect(await mayDefineEnvironments(join(saas, "a.yaml"), { readText })).toBe(true);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
  });
});
