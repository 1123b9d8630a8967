import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";

// A FIFO (named pipe) in plumb's state directory, where it reads back files it wrote itself (a
// status record, a lock's holder record, the prune ledger): the built CLI opened it to read and
// blocked for ever (the controller's every environment with it). Each is now opened without
// blocking and must be a regular file (src/status/state-file.ts): a record is reported, naming its
// path, and a lock record is no holder. A real control plane (the prune ledger and the other
// readers: test/status/state-file.test.ts).

const KEY = "state-fifo-key-0123456789";
let plane: RunningControlPlane;
let dir: string;

const DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: fifo-agent
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/fifo:1"}
`;

/** The built CLI run to its end, or killed after 20 s (a read that blocks never ends). */
async function plumb(args: string[]) {
  const run = spawnCli(args, { PLUMB_API_URL: plane.url, PLUMB_API_KEY: KEY });
  const timer = setTimeout(() => run.child.kill("SIGKILL"), 20_000);
  const code = await run.exited.finally(() => clearTimeout(timer));
  return { code, output: run.output(), killed: run.child.signalCode === "SIGKILL" };
}

const fifo = (path: string) => execFileSync("mkfifo", [path]);

beforeAll(async () => {
  assertBuilt();
  plane = await startControlPlane({ apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }] });
});
afterAll(() => plane.stop());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-state-fifo-"));
  await writeFile(join(dir, "agent.yaml"), DEPLOYMENT);
  await mkdir(join(dir, ".plumb", "status"), { recursive: true });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("a FIFO as a status record: plan says so, naming its path, and goes on", async () => {
  const record = join(dir, ".plumb", "status", "deployment.fifo-agent.json");
  fifo(record);
  const run = await plumb(["plan", dir]);
  expect(run.killed, run.output).toBe(false);
  expect(run.output).toContain(record);
  expect(run.output).toContain("a FIFO (named pipe), not a regular file");
  expect(run.output).toContain("fifo-agent");
});

it("a FIFO as the lock's holder record: apply is refused as locked at once, not blocked", async () => {
  const lock = join(dir, ".plumb", "status.lock");
  await mkdir(lock);
  fifo(join(lock, "holder.json"));
  const run = await plumb(["apply", dir, "--yes", "--lock-timeout", "0s"]);
  expect(run.killed, run.output).toBe(false);
  expect(run.output).toContain("[state-locked]");
  expect(run.code).toBe(1);
});
