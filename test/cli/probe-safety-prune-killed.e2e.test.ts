import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, runCli, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { containerManifest } from "../support/manifest-text.js";

// The deletion budget of --prune (--prune-max per --prune-window, the prune ledger) counted a
// deletion after its DELETE was answered: an apply killed (SIGKILL, an OOM kill, a lost runner)
// between the server carrying out the DELETE and the ledger write left a deletion the budget never
// saw, and each such kill let one more deployment go past the limit. Counted on the control plane:
// 6 deployments deleted within one window of the default 5.

let plane: RunningControlPlane;
let proxy: HoldingProxy;
let dir: string;
const env = () => ({ PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY });
const NAMES = ["d1", "d2", "d3", "d4", "d5", "d6", "keep"];

const doc = containerManifest;

async function liveNames(): Promise<string[]> {
  const res = await fetch(`${plane.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  const { resources } = (await res.json()) as { resources: Array<{ name: string }> };
  return resources.map((d) => d.name).sort();
}

beforeAll(async () => {
  assertBuilt();
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  proxy = await startHoldingProxy(plane.url);
  dir = await mkdtemp(join(tmpdir(), "plumb-prune-killed-"));
  execFileSync("git", ["init", "-q", dir]);
  for (const name of NAMES) await writeFile(join(dir, `${name}.yaml`), doc(name));
  expect((await runCli(["apply", dir, "--yes"], env())).code).toBe(0);
});
afterAll(async () => {
  await proxy?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("an apply --prune killed once its DELETE landed still counts that deletion in the budget", async () => {
  for (const name of ["d1", "d2", "d3", "d4", "d5"]) await rm(join(dir, `${name}.yaml`));
  const held = proxy.hold((method) => method === "DELETE");
  const run = spawnCli(["apply", dir, "--yes", "--prune"], env());
  const request = await Promise.race([held, run.exited.then(() => null)]);
  if (!request) throw new Error(`apply ended before its DELETE was seen:\n${run.output()}`);
  await request.land(); // the server deleted it; its answer never reaches the apply
  run.child.kill("SIGKILL");
  await run.exited;
  expect(await liveNames()).toEqual(["d2", "d3", "d4", "d5", "d6", "keep"]);

  const rerun = await runCli(["apply", dir, "--yes", "--prune"], env());
  expect(rerun.code, rerun.output).toBe(0);
  expect(await liveNames()).toEqual(["d6", "keep"]); // 5 deleted in this window

  await rm(join(dir, "d6.yaml")); // a sixth removal in the same window: over the budget
  const over = await runCli(["apply", dir, "--yes", "--prune"], env());
  expect(over.output).toMatch(/prune-limit/);
  expect(over.code).toBe(1);
  expect(await liveNames()).toEqual(["d6", "keep"]);
});
