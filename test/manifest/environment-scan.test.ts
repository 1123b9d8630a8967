import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { environmentFilesFor, mayDefineEnvironments } from "../../src/manifest/environment-scan.js";

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

  it("an Environment file itself runs with its siblings, itself left out", async () => {
    await mkdir(join(root, ".git"));
    await put("environments/prod.yaml", ENV);
    await put("environments/staging.yaml", ENV.replace("prod", "staging"));
    expect(environmentFilesFor(join(root, "environments/prod.yaml"))).toEqual([
      join(root, "environments/staging.yaml"),
    ]);
  });
});
