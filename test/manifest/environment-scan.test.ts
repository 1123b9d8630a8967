import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  environmentFilesAbove,
  environmentFilesFor,
  mayDefineEnvironments,
} from "../../src/manifest/environment-scan.js";
import { loadManifests } from "../../src/manifest/load.js";

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
  it("finds one in a nested file, and none in a tree without (comments, .plumb/ not counted)", () => {
    expect(mayDefineEnvironments(dir)).toBe(true);
    expect(mayDefineEnvironments(join(dir, "envs", "nested", "prod.yml"))).toBe(true);
    expect(mayDefineEnvironments(join(dir, "plain"))).toBe(false);
    expect(mayDefineEnvironments(join(dir, "ignored"))).toBe(false);
    expect(mayDefineEnvironments(join(dir, "missing"))).toBe(false);
  });

  it("reads no file larger than the load accepts (it is refused there, unread)", async () => {
    const big = await mkdtemp(join(tmpdir(), "plumb-env-scan-big-"));
    try {
      await writeFile(join(big, "huge.yaml"), `kind: Environment\n${"#".repeat(4096)}\n`);
      expect(mayDefineEnvironments(big, { maxBytes: 1024 })).toBe(false);
      expect(mayDefineEnvironments(big, { maxBytes: 8192 })).toBe(true);
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
    expect(environmentFilesFor(join(root, "repo/teams/saas/b.yaml"))).toEqual([]);
    expect(mayDefineEnvironments(join(root, "repo/teams/saas/b.yaml"))).toBe(false);
    expect(environmentFilesFor(join(root, "repo/teams/saas/a.yaml"))).toEqual([
      join(root, "repo/environments/prod.yaml"),
      join(root, "repo/environments/staging.yml"),
    ]);
    expect(mayDefineEnvironments(join(root, "repo/teams/saas/a.yaml"))).toBe(true);
    // A nearer tree with environments wins over the repository's.
    await put("repo/teams/envs/qa.yaml", ENV.replace("prod", "qa"));
    expect(environmentFilesFor(join(root, "repo/teams/saas/a.yaml"))).toEqual([
      join(root, "repo/teams/envs/qa.yaml"),
    ]);
  });

  it("stops at the git root, and outside git looks only in the file's own directory", async () => {
    await put("environments/prod.yaml", ENV); // above the repository: never read
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/a.yaml", NAMING);
    expect(environmentFilesFor(join(root, "repo/a.yaml"))).toEqual([]);
    expect(mayDefineEnvironments(join(root, "repo/a.yaml"))).toBe(false);
    await put("loose/a.yaml", NAMING);
    expect(environmentFilesFor(join(root, "loose/a.yaml"))).toEqual([]);
  });

  it("outside git, reads the files of its own directory, never the tree below it (other projects)", async () => {
    // A file in /tmp or $HOME: below its directory are other people's clones with environments.
    await put("tmp/a.yaml", NAMING);
    await put("tmp/someone-elses-clone/environments/prod.yaml", ENV);
    expect(environmentFilesFor(join(root, "tmp/a.yaml"))).toEqual([]);
    expect(mayDefineEnvironments(join(root, "tmp/a.yaml"))).toBe(false);
    await put("tmp/prod.yaml", ENV); // beside it: the file's own environments
    expect(environmentFilesFor(join(root, "tmp/a.yaml"))).toEqual([join(root, "tmp/prod.yaml")]);
    // In a repository, the file's directory's tree is read as before (bounded by the repository).
    await mkdir(join(root, "repo", ".git"), { recursive: true });
    await put("repo/a.yaml", NAMING);
    await put("repo/envs/prod.yaml", ENV);
    expect(environmentFilesFor(join(root, "repo/a.yaml"))).toEqual([join(root, "repo/envs/prod.yaml")]);
  });

  it("an Environment file itself runs with its siblings, itself left out", async () => {
    await mkdir(join(root, ".git"));
    await put("environments/prod.yaml", ENV);
    await put("environments/staging.yaml", ENV.replace("prod", "staging"));
    expect(environmentFilesFor(join(root, "environments/prod.yaml"))).toEqual([
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
    expect(environmentFilesAbove(join(root, "repo/teams/saas"))).toEqual([
      join(root, "repo/environments/prod.yaml"),
    ]);
    expect(environmentFilesAbove(join(root, "repo"))).toEqual([]);
    await put("loose/envs/prod.yaml", ENV);
    await put("loose/agents/a.yaml", NAMING);
    expect(environmentFilesAbove(join(root, "loose/agents"))).toEqual([]);
  });

  it("the quick scan says so only for a directory whose manifests name environments, when asked", () => {
    expect(mayDefineEnvironments(join(root, "repo/teams/saas"), { above: true })).toBe(true);
    expect(mayDefineEnvironments(join(root, "repo/teams/saas"))).toBe(false); // the controller's
    expect(mayDefineEnvironments(join(root, "repo/teams/plain"), { above: true })).toBe(false);
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
