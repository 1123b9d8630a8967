import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCommand } from "../../src/cli/adopt/import.js";
import { DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { PlumbError } from "../../src/errors.js";
import { environmentDoc, PROD_KEY, runCommand, startTwoPlanes } from "./two-planes.js";

// plumb import --out DIR where DIR is a directory of a repository whose Environment documents are
// above it (docs/import.md "With environments", docs/environments.md "A directory as PATH"): --env
// read prod's control plane (the Environments above were found) and then refused with `unknown
// environment "prod" under DIR`; without --env the files were written with no
// metadata.environments, so `plumb apply .` from the root sent prod's deployments to staging too.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let repo: string;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  repo = await mkdtemp(join(tmpdir(), "plumb-env-probe-import-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await mkdir(join(repo, "agents"));
  await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(join(repo, "environments", "prod.yaml"), environmentDoc("prod"));
  const res = await fetch(`${prod.url}/v2/deployments`, {
    method: "POST",
    headers: { "x-api-key": PROD_KEY, "content-type": "application/json" },
    body: JSON.stringify({
      name: "billing-agent",
      source: "gitrepo",
      source_config: {
        integration_id: DEFAULT_INTEGRATION_ID,
        repo_url: "https://github.com/acme/billing-agent",
        deployment_type: "dev",
      },
      source_revision_config: { repo_ref: "refs/tags/v3.8.0", graph_config_path: "langgraph.json" },
      secrets: [],
    }),
  });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(repo, { recursive: true, force: true });
});

const run = (args: string[], env: Record<string, string> = {}) =>
  runCommand(importCommand, args, { staging, prod }, env);

describe("plumb import into a directory below the Environment documents", () => {
  it("--env prod writes prod's deployments there, to run in prod only", async () => {
    const out = join(repo, "agents");
    const { code } = await run(["--out", out, "--env", "prod"]);
    expect(code).toBe(0);
    const written = await readFile(join(out, "billing-agent.yaml"), "utf8");
    expect(written).toMatch(/ environments:\n +- prod\n/);
  });

  it("without --env, is refused and writes nothing (an existing directory, or one not made yet)", async () => {
    // PLUMB_API_URL names prod's control plane: without the refusal its deployment is written
    // there as a manifest of every environment.
    const env = { PLUMB_API_URL: prod.url, PLUMB_API_KEY: PROD_KEY };
    for (const out of [join(repo, "agents"), join(repo, "more", "agents")]) {
      const before = await readdir(join(repo, "agents"));
      await expect(run(["--out", out, "--name", "billing-agent", "--force"], env)).rejects.toSatisfy(
        (e) =>
          e instanceof PlumbError &&
          e.exitCode === 64 &&
          /defines environments \(prod, staging\)/.test(e.message),
      );
      expect(await readdir(join(repo, "agents"))).toEqual(before);
      await expect(readdir(join(repo, "more"))).rejects.toThrow(/ENOENT/);
    }
  });
});
