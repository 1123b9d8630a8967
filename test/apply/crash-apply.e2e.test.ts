import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, writeDoc } from "../controller/support.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { runCommand } from "../cli/two-planes.js";

// kill -9 of `plumb apply` at each moment of its work, then a re-run: exactly one deployment per
// name and one revision per change. The proxy holds the chosen request, so the kill lands exactly
// then, and decides whether the server ever sees it (both are possible after a real crash). The
// apply that is killed is a real process (a real SIGKILL); the runs before and after it are the
// commands called in this process (a child would add only its start-up), whose applies read the
// revision at the tests' pace (TEST_POLL), not the engine's first read after 0.5-1 s.

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let dir: string;

beforeAll(assertBuilt);
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const names = ["alpha", "beta"];
const verify = {
  assistant_id: "agent",
  input: { messages: [{ role: "user", content: "ping" }] },
  timeout_seconds: 20,
};
const doc = (name: string, image: string) =>
  container(name, image, {
    secrets: [{ name: "API_TOKEN", valueFrom: { env: "API_TOKEN" } }],
    verify,
  });

async function setup(revisionSeconds = 0.05, runSeconds = 0) {
  dir = await mkdtemp(join(tmpdir(), "plumb-crash-"));
  cp = await startControlPlane({ revisionSeconds, runSeconds, deploymentReadySeconds: 0 });
  proxy = await startHoldingProxy(cp.url);
  for (const name of names) await writeDoc(dir, `${name}.yaml`, doc(name, `img/${name}:1`));
}

const env = (token: string) => ({
  PLUMB_API_URL: proxy.url,
  PLUMB_API_KEY: DEFAULT_API_KEY,
  API_TOKEN: token,
});
/** The command in this process, as `plumb ARGS` runs it: its exit code and everything it printed. */
async function command(build: typeof applyCommand | typeof planCommand, args: string[], token: string) {
  const { code, out, err } = await runCommand(build, args, { staging: cp, prod: cp }, env(token));
  return { code, output: out + err };
}
const apply = (token: string) => command(applyCommand, [dir, "--yes", "--timeout", "60s"], token);
const plan = (token: string) => command(planCommand, [dir, "--detailed-exitcode"], token);

/** Starts an apply, kills it with SIGKILL the moment `match` is in flight, then settles that request. */
async function killDuring(token: string, match: (m: string, u: string) => boolean, landed: boolean) {
  const held = proxy.hold(match);
  const run = spawnCli(["apply", dir, "--yes", "--timeout", "60s"], env(token));
  const request = await Promise.race([held, run.exited.then(() => null)]);
  if (!request) throw new Error(`apply ended before the request was seen:\n${run.output()}`);
  run.child.kill("SIGKILL");
  await run.exited;
  if (landed) await request.forward();
  else request.drop();
}

async function revisionCounts(): Promise<Record<string, number>> {
  const client = api(cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments())
    counts[d.name] = (counts[d.name] ?? 0) + (await client.revisions(d.id)).length;
  return counts;
}

async function expectConverged(token: string, revisions: number) {
  const rerun = await apply(token);
  expect(rerun.code, rerun.output).toBe(0);
  const live = await api(cp.url).deployments();
  expect(live.map((d) => d.name).sort()).toEqual(names); // no duplicate
  expect(await revisionCounts()).toEqual(Object.fromEntries(names.map((n) => [n, revisions])));
  const after = await plan(token);
  expect(after.code, after.output).toBe(0); // nothing left to change, secrets included
}

const isCreate = (m: string, u: string) => m === "POST" && u.startsWith("/v2/deployments");
const isPatch = (m: string, u: string) => m === "PATCH" && u.startsWith("/v2/deployments/");
const isRevisionRead = (m: string, u: string) => m === "GET" && /\/revisions\/[^/?]+/.test(u);
const isVerifyRun = (m: string, u: string) => m === "POST" && u.startsWith("/agents/") && u.includes("/runs");

describe("kill -9 of plumb apply, then a re-run", () => {
  for (const landed of [true, false]) {
    it(`during a create (${landed ? "landed" : "never arrived"}): one deployment, one revision`, async () => {
      await setup();
      await killDuring("token-1", isCreate, landed);
      await expectConverged("token-1", 1);
    }, 60_000);

    it(`during a PATCH changing a secret (${landed ? "landed" : "never arrived"}): one new revision`, async () => {
      await setup();
      expect((await apply("token-1")).code).toBe(0);
      await killDuring("token-2", isPatch, landed);
      await expectConverged("token-2", 2);
    }, 60_000);
  }

  it("while waiting for the new revision: the secret is not sent again", async () => {
    await setup(0.3);
    expect((await apply("token-1")).code).toBe(0);
    await killDuring("token-2", isRevisionRead, true);
    await expectConverged("token-2", 2);
  }, 60_000);

  it("during verify: the re-run verifies without sending anything", async () => {
    await setup(0.05, 0.2);
    expect((await apply("token-1")).code).toBe(0);
    await killDuring("token-2", isVerifyRun, true);
    await expectConverged("token-2", 2);
  }, 60_000);
});
