import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateCommand } from "../../src/cli/offline/validate.js";

// validate resolves each environment: an override that makes a deployment invalid in one
// environment is an error at the override's line, naming the environment; --env narrows it.

let dir: string;
// staging's suffix: on one control plane, the two environments' deployments need different names.
const environment = (name: string, suffix = "") =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  api_url: http://127.0.0.1:8123\n  api_key: {env: KEY}\n${suffix}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-validate-env-"));
  await writeFile(
    join(dir, "envs.yaml"),
    `${environment("staging", "  name_suffix: -staging\n")}---\n${environment("prod")}`,
  );
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
environments:
  prod:
    spec:
      source_config: {deployment_type: production}
`,
  );
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function validate(args: string[]) {
  let out = "";
  process.exitCode = 0;
  await validateCommand({ write: (t: string) => (out += t) }).parseAsync([dir, ...args], { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, code };
}

describe("validate with environments", () => {
  it("reports a merged value that is invalid in one environment at the override's line", async () => {
    const { out, code } = await validate([]);
    expect(code).toBe(1);
    expect(out).toMatch(/agent\.yaml:15:\d+: error: .*"production".*\(environment prod\)/);
  });

  it("--env staging leaves prod's override out", async () => {
    const { out, code } = await validate(["--env", "staging"]);
    expect(out).toContain("0 errors");
    expect(code).toBe(0);
  });
});
