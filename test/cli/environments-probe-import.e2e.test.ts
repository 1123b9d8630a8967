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
// environment "prod" under DIR`. Without --env it imports as plan and apply treat such a DIR (not
// pulled into the Environments above), with a warning that an apply of the tree above runs it in
// every environment.

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

  it("without --env, imports as plan and apply run it (PLUMB_API_URL), warning that the tree above would run it everywhere", async () => {
    // As `plumb apply DIR` without --env: not pulled into the Environments above (a repository
    // keeping examples beside a plain deployments/ folder). The root itself is still refused.
    const env = { PLUMB_API_URL: prod.url, PLUMB_API_KEY: PROD_KEY };
    const out = join(repo, "more", "agents");
    const { code, err } = await run(["--out", out, "--name", "billing-agent"], env);
    expect(code).toBe(0);
    expect(err).toContain(
      `plumb: warning: ${out} is below Environment documents (prod, staging): the manifests written name no environment`,
    );
    expect(await readFile(join(out, "billing-agent.yaml"), "utf8")).not.toContain("environments:");
    await expect(run(["--out", repo, "--name", "billing-agent"], env)).rejects.toSatisfy(
      (e) =>
        e instanceof PlumbError &&
        e.exitCode === 64 &&
        /defines environments \(prod, staging\)/.test(e.message),
    );
    expect(await readdir(repo)).not.toContain("billing-agent.yaml");
  });
});
