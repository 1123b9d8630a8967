import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/clock.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { readPruneLedger } from "../../src/status/prune-ledger.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { runInProcess } from "../support/in-process-cli.js";
import { containerManifest } from "../support/manifest-text.js";

// An apply --prune killed (SIGKILL) once its DELETE had landed left the deployment AWAITING_DELETE
// with its status record; the next apply --prune listed it again and sent a second DELETE (the
// control plane answers 204 again: no harm on the server, but a request more and an output line
// saying it deleted it, twice counted on the wire). Now it sends none: it waits until the deployment
// is gone, drops the record, and says the deletion was under way. Counted on the control plane.

let plane: RunningControlPlane;
let proxy: HoldingProxy;
let dir: string;
let ahead = 0; // the control plane's clock runs this far ahead of the wall clock
const clock: Clock = { now: () => systemClock.now() + ahead, sleep: systemClock.sleep };
const env = () => ({ PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY });
const READY_SECONDS = 600; // AWAITING_DELETE lasts until the test moves the clock on

const doc = containerManifest;

async function live(): Promise<Array<{ name: string; id: string; status: string }>> {
  const res = await fetch(`${plane.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  return ((await res.json()) as { resources: Array<{ name: string; id: string; status: string }> }).resources;
}

beforeAll(async () => {
  assertBuilt();
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: READY_SECONDS, clock });
  proxy = await startHoldingProxy(plane.url);
  dir = await mkdtemp(join(tmpdir(), "plumb-prune-resumed-"));
  execFileSync("git", ["init", "-q", dir]);
  for (const name of ["gone", "keep"]) await writeFile(join(dir, `${name}.yaml`), doc(name));
  const created = await runInProcess(["apply", dir, "--yes"], env());
  expect(created.code, created.output).toBe(0);
  ahead += (READY_SECONDS + 1) * 1000; // both READY
});
afterAll(async () => {
  await proxy?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("a resumed apply --prune sends no second DELETE for a deployment being deleted, and converges", async () => {
  const id = (await live()).find((d) => d.name === "gone")!.id;
  await rm(join(dir, "gone.yaml"));
  const held = proxy.hold((method) => method === "DELETE");
  const run = spawnCli(["apply", dir, "--yes", "--prune"], env());
  const request = await Promise.race([held, run.exited.then(() => null)]);
  if (!request) throw new Error(`apply ended before its DELETE was seen:\n${run.output()}`);
  await request.land(); // the server is deleting it; the apply is killed before it hears so
  run.child.kill("SIGKILL");
  await run.exited;
  expect((await live()).find((d) => d.id === id)?.status).toBe("AWAITING_DELETE");

  // Once the resumed run waits for it (polls it), the control plane finishes the deletion.
  const polled = proxy.watch((method, url) => method === "GET" && url.startsWith(`/v2/deployments/${id}`));
  void polled.then(() => (ahead += (READY_SECONDS + 1) * 1000));
  const deletesBefore = proxy.requests.filter((r) => r.method === "DELETE").length;
  const rerun = await runInProcess(["apply", dir, "--yes", "--prune"], env());
  expect(rerun.code, rerun.output).toBe(0);
  expect(proxy.requests.filter((r) => r.method === "DELETE").length - deletesBefore).toBe(0);
  expect(rerun.output).toContain(`Deployment gone (${id}): deleted (its deletion was under way already`);
  expect((await live()).map((d) => d.name)).toEqual(["keep"]);
  expect((await readPruneLedger(join(dir, ".plumb", "status"))).map((e) => e.id)).toEqual([id]);

  const again = await runInProcess(["apply", dir, "--yes", "--prune"], env());
  expect(again.code, again.output).toBe(0);
  expect(proxy.requests.filter((r) => r.method === "DELETE").length - deletesBefore).toBe(0);
}, 60_000);
