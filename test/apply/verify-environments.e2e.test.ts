import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { runInProcess } from "../support/in-process-cli.js";

// The agent's checks per environment: one Deployment whose verify differs by an override, applied
// to two real control planes; each environment's store keeps the checks of its own revision, and
// only the environment below its thresholds fails (verify-failed).

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

const environment = (name: string, urlVariable: string) => `apiVersion: plumb/v1
kind: Environment
metadata: {name: ${name}}
spec:
  api_url: {env: ${urlVariable}}
  api_key: {env: PLUMB_TEST_KEY}
  mode: saas
`;

const DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: support-agent}
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
  verify:
    assistant_id: agent
    cases:
      - {name: ping, input: ping, expect_regex: "^pong$"}
environments:
  staging:
    spec:
      verify: {repeat: 3}
  prod:
    spec:
      verify:
        cases:
          - {name: ping, input: ping, expect_regex: "^pong$"}
          - {name: refund, input: ping, expect_contains: refund}
`;

beforeAll(async () => {
  staging = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  prod = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  dir = await mkdtemp(join(tmpdir(), "plumb-verify-env-"));
  await writeFile(join(dir, "staging.yaml"), environment("staging", "STAGING_URL"));
  await writeFile(join(dir, "prod.yaml"), environment("prod", "PROD_URL"));
  await writeFile(join(dir, "support-agent.yaml"), DEPLOYMENT);
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

const settings = () => ({ STAGING_URL: staging.url, PROD_URL: prod.url, PLUMB_TEST_KEY: DEFAULT_API_KEY });
const checksIn = async (env: string) =>
  (await loadStatusStore(join(dir, ".plumb", "status", env))).objects.get("Deployment/support-agent")!;

describe("verify per environment", () => {
  it("records each environment's checks in its own store; only prod's fail", async () => {
    // --keep-going: prod (first: no promotion, so by name) fails its checks; staging is applied too.
    const applied = await runInProcess(["apply", dir, "--yes", "--keep-going"], settings());
    expect(applied.code, applied.output).toBe(1);
    expect(applied.output).toContain("[verify-failed]");
    const stagingRecord = await checksIn("staging");
    expect(stagingRecord.health).toBe("Healthy");
    expect(stagingRecord.checks).toMatchObject({
      revision_id: stagingRecord.active_revision_id,
      runs: 3,
      passed: 3,
      pass_ratio: 1,
    });
    const prodRecord = await checksIn("prod");
    expect(prodRecord.health).toBe("Degraded");
    expect(prodRecord.checks).toMatchObject({
      revision_id: prodRecord.active_revision_id,
      runs: 2,
      passed: 1,
      failures: [{ case: "refund", reason: 'the answer does not contain "refund"' }],
    });
    // Two control planes, two different revisions: each record names its own.
    expect(stagingRecord.checks!.revision_id).not.toBe(prodRecord.checks!.revision_id);

    const planned = await runInProcess(["plan", dir, "--env", "prod", "--output", "json"], settings());
    const plan = JSON.parse(planned.output.slice(planned.output.indexOf("{"))) as {
      environments: Array<{ changes: Array<{ checks?: unknown }> }>;
    };
    expect(plan.environments[0]!.changes[0]!.checks).toMatchObject({
      runs: 2,
      last: { revision_id: prodRecord.active_revision_id, passed: 1, runs: 2 },
    });
  });
});
