import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { runCommand } from "./two-planes.js";

// A listener id is a UUID, which the manifest schema takes in any case and the control plane stores
// and echoes in lower case. A manifest writing the id in upper case was refused by plan's
// installation check (unknown-listener: the listed ids compared as written), and once created the
// next plan saw the immutable listener_id changed (refused). Ids are compared as stored now.

const HEX = "abcdef01-2345-4678-9abc-def012345678";
let cp: RunningControlPlane;
let dir: string;

beforeAll(async () => {
  cp = await startControlPlane({
    mode: "self-hosted",
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    listeners: [{ id: HEX, compute_type: "k8s", compute_id: "local-cluster" }],
  });
  dir = await mkdtemp(join(tmpdir(), "plumb-uppercase-ids-"));
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: upper
spec:
  source: external_container
  source_config:
    listener_id: ${HEX.toUpperCase()}
  source_revision_config:
    image_uri: registry.example/upper:1
`,
  );
});

afterAll(async () => {
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (command: typeof planCommand | typeof applyCommand, args: string[]) =>
  runCommand(
    command,
    args,
    { staging: cp, prod: cp },
    {
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
    },
  );

it("an upper-case listener_id is the listener's id: created once, then unchanged", async () => {
  const applied = await run(applyCommand, [dir, "--yes"]);
  expect(applied.code, applied.out + applied.err).toBe(0);
  const client = api(cp.url, DEFAULT_API_KEY);
  const created = await client.deployment("upper");
  expect(created.source_config.listener_id).toBe(HEX);
  const again = await run(planCommand, [dir, "-o", "json"]);
  const plan = JSON.parse(again.out) as { changes: Array<{ name: string; action: string }> };
  expect(plan.changes.map((c) => `${c.name} ${c.action}`)).toEqual(["upper noop"]);
  const reapplied = await run(applyCommand, [dir, "--yes"]);
  expect(reapplied.code, reapplied.err).toBe(0);
  expect(await client.revisions(created.id)).toHaveLength(1);
});
