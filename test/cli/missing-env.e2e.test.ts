import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { formatMissingEnv } from "../../src/reconcile/missing-env.js";
import { copyFlatExample } from "../support/flat-example.js";

// A `valueFrom.env` secret whose variable is not set: said once with the deployments that need it,
// and never shown as `-NAME` (which reads as deleting the secret).

let cp: RunningControlPlane;
let dir: string;
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  dir = await mkdtemp(join(tmpdir(), "plumb-env-"));
  await copyFlatExample("saas", dir);
});
afterAll(async () => {
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

async function run(
  command: typeof planCommand | typeof applyCommand,
  args: string[],
  env: Record<string, string>,
) {
  let out = "";
  let err = "";
  process.exitCode = 0;
  await command({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    env: { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, ...env },
  }).parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code };
}

describe("an unset env variable behind secrets", () => {
  it("is said once with the deployments that need it, and no secret reads as deleted", async () => {
    await run(applyCommand, [dir, "--target", "triage-agent", "--yes", "--no-wait"], {
      OPENAI_API_KEY: "sk-x",
    });
    const result = await run(planCommand, [dir], {});
    expect(result.code).toBe(1);
    const lines = result.err.split("\n").filter((l) => l.includes("env variable OPENAI_API_KEY not set"));
    expect(lines).toEqual([
      "plumb: env variable OPENAI_API_KEY not set: secret OPENAI_API_KEY of docs-agent, research-agent, support-agent, triage-agent (4 deployments not planned until it is set)",
    ]);
    expect(result.out).not.toMatch(/-\s*OPENAI_API_KEY/); // the existing triage-agent's secret is unknown, not removed
    expect(result.out).toContain("triage-agent.yaml:15:7: secret OPENAI_API_KEY"); // still located per manifest
    const json = await run(planCommand, [dir, "--output", "json", "--target", "triage-agent"], {});
    expect(json.out).not.toContain('"op": "remove"');
  });

  it("formats one line per variable, long lists cut short", () => {
    const many = Array.from({ length: 12 }, (_, i) => `agent-${String(i).padStart(2, "0")}`);
    expect(formatMissingEnv([{ variable: "TOKEN", secrets: ["API_TOKEN"], deployments: many }])).toEqual([
      "env variable TOKEN not set: secret API_TOKEN of agent-00, agent-01, agent-02, agent-03, agent-04, agent-05, agent-06, agent-07, agent-08, agent-09 and 2 more (12 deployments not planned until it is set)",
    ]);
  });
});
