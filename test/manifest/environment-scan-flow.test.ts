import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mayDefineEnvironments } from "../../src/manifest/environment-scan.js";
import { loadManifests } from "../../src/manifest/load.js";

// An Environment written in flow style or as JSON (YAML too: a generated file) is found by the quick
// scan as one in block style is (docs/environments.md "A directory as PATH"). The scan looked for a
// line `kind: Environment` only: --env on a directory below such a file was refused ("no kind:
// Environment document is defined under PATH, nor above it"), and `plumb apply .` without --env took
// the tree for one without environments ("this command does not take --env yet").

let repo: string;

const JSON_ENVIRONMENT =
  '{"apiVersion": "plumb/v1", "kind": "Environment", "metadata": {"name": "staging"}, "spec": {"api_url": "https://api.example.com", "api_key": {"env": "K"}}}\n';
const FLOW_ENVIRONMENT =
  "{apiVersion: plumb/v1, kind: Environment, metadata: {name: prod}, spec: {api_url: https://prod.example.com, api_key: {env: K}}}\n";
const DEPLOYMENT =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: img/a:1}\n";

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "plumb-env-scan-flow-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await mkdir(join(repo, "agents"));
  await mkdir(join(repo, "plain"));
  await writeFile(join(repo, "environments", "staging.yaml"), JSON_ENVIRONMENT);
  await writeFile(join(repo, "environments", "prod.yaml"), FLOW_ENVIRONMENT);
  await writeFile(join(repo, "agents", "a.yaml"), DEPLOYMENT);
  await writeFile(
    join(repo, "plain", "b.yaml"),
    '# {"kind": "Environment"} in a comment\n# kind: Environment\nkind: Deployment\ndescription: "kind: Environments"\n',
  );
});
afterAll(async () => rm(repo, { recursive: true, force: true }));

describe("the quick scan, Environments in flow style or JSON", () => {
  it("finds them in the tree", async () => {
    expect(await mayDefineEnvironments(join(repo, "environments", "staging.yaml"))).toBe(true);
    expect(await mayDefineEnvironments(join(repo, "environments", "prod.yaml"))).toBe(true);
    expect(await mayDefineEnvironments(repo)).toBe(true);
  });

  it("and above a directory --env runs", async () => {
    const tree = await loadManifests(join(repo, "agents"), {
      environmentsAbove: true,
      environmentRequested: true,
    });
    expect(tree.problems).toEqual([]);
    expect(tree.environments?.map((e) => e.manifest.metadata.name).sort()).toEqual(["prod", "staging"]);
  });

  it("not in comments, nor in a longer value", async () => {
    expect(await mayDefineEnvironments(join(repo, "plain"))).toBe(false);
  });
});
