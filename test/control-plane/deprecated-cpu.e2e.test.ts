import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, runCli } from "../support/built-cli.js";

// Spec 2.4 rounds every CPU value to one decimal, the deprecated orchestrator_* and executor_*
// fields included; the control plane stores 0.3 for 0.25. plumb must model it the same way: once
// applied, plan shows nothing to do (it showed 0.3 → 0.25 as drift on every run).

const MANIFEST = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: alpha
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec:
      orchestrator_cpu: 0.25
      executor_cpu_limit: 1.05
  source_revision_config:
    image_uri: registry.example.com/agent:1
  secrets: []
`;

let cp: RunningControlPlane;
let dir: string;
beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ mode: "self-hosted", revisionSeconds: 0, deploymentReadySeconds: 0 });
  dir = await mkdtemp(join(tmpdir(), "plumb-deprecated-cpu-"));
  await writeFile(join(dir, "alpha.yaml"), MANIFEST);
});
afterAll(async () => {
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("deprecated CPU fields, rounded by the control plane", () => {
  it("validate warns of the rounding; after apply, plan has nothing to change", async () => {
    const env = {
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PLUMB_STATUS_DIR: join(dir, ".status"),
    };
    const validated = await runCli(["validate", dir], env, dir);
    expect(validated.output).toContain(
      "orchestrator_cpu 0.25 has more than one decimal; the control plane rounds it to 0.3",
    );
    const applied = await runCli(["apply", dir, "--yes"], env, dir);
    expect(applied.code, applied.output).toBe(0);
    const planned = await runCli(["plan", dir], env, dir);
    expect(planned.code, planned.output).toBe(0);
    expect(planned.output).toContain("No changes: live matches the manifests (1 unchanged).");
    expect(planned.output).not.toContain("→");
  });
});
