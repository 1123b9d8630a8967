import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { assertBuilt, type CliRun, listeningPort, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { useControllerHarness } from "./harness.js";
import { api, container, waitFor, writeDoc } from "./support.js";

// kill -9 of the built controller at each moment of a reconcile with secrets, then a restart:
// exactly one deployment per name and one revision per change (the write-ahead record).

const h = useControllerHarness("plumb-crash-ctl-");
let proxy: HoldingProxy;
const children: CliRun[] = [];
beforeAll(assertBuilt);
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await proxy?.close();
});

const names = ["alpha", "beta"];
const doc = (name: string) =>
  container(name, `img/${name}:1`, { secrets: [{ name: "API_TOKEN", valueFrom: { env: "API_TOKEN" } }] });

async function startCtl(token: string) {
  const env = { PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY, API_TOKEN: token };
  const args = ["controller", "--dir", h.dir, "--listen", "127.0.0.1:0", "--debounce", "20ms"];
  const run = spawnCli([...args, "--poll-interval", "20ms"], env);
  children.push(run);
  return { run, url: `http://127.0.0.1:${await listeningPort(run)}` };
}

async function revisions() {
  const client = api(h.cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments())
    counts[d.name] = (counts[d.name] ?? 0) + (await client.revisions(d.id)).length;
  return counts;
}

/** Every object of the first scan reconciled once (/status "settled"; /readyz is 200 earlier). */
const settled = (url: string) => async () =>
  ((await (await fetch(`${url}/status`).catch(() => null))?.json()) as { settled?: boolean } | undefined)
    ?.settled === true;

/**
 * The held request, or a failure with the controller's output if it exited first (a wait bounded
 * by the process, not by the test's timeout).
 */
async function heldOrExited<T>(held: Promise<T>, run: CliRun): Promise<T> {
  const request = await Promise.race([held, run.exited.then(() => null)]);
  if (request === null)
    throw new Error(`the controller exited before the request was seen:\n${run.output()}`);
  return request;
}

async function restartAndExpect(token: string, perName: number) {
  const { run, url } = await startCtl(token);
  await waitFor(
    "settled after restart",
    async () => {
      if (run.child.exitCode !== null) throw new Error(`the controller exited:\n${run.output()}`);
      return settled(url)();
    },
    30_000,
  );
  expect(await revisions()).toEqual(Object.fromEntries(names.map((n) => [n, perName])));
}

const moments: Array<[string, (m: string, u: string) => boolean]> = [
  ["during a create", (m, u) => m === "POST" && u.startsWith("/v2/deployments")],
  ["while waiting for the revision", (m, u) => m === "GET" && /\/revisions\/[^/?]+/.test(u)],
];

describe("kill -9 of plumb controller, then a restart", () => {
  for (const [moment, match] of moments)
    it(`${moment}: no duplicate, one revision per deployment`, async () => {
      proxy = await startHoldingProxy(h.cp.url);
      for (const name of names) await writeDoc(h.dir, `${name}.yaml`, doc(name));
      const held = proxy.hold(match);
      const { run } = await startCtl("token-1");
      const request = await heldOrExited(held, run);
      run.child.kill("SIGKILL");
      await run.exited;
      await request.forward();
      await restartAndExpect("token-1", 1);
    }, 60_000);

  it("during a PATCH that changes a secret: one new revision", async () => {
    proxy = await startHoldingProxy(h.cp.url);
    for (const name of names) await writeDoc(h.dir, `${name}.yaml`, doc(name));
    const first = await startCtl("token-1");
    await waitFor("settled", settled(first.url), 30_000);
    first.run.child.kill("SIGKILL");
    await first.run.exited;
    const held = proxy.hold((m, u) => m === "PATCH" && u.startsWith("/v2/deployments/"));
    const second = await startCtl("token-2"); // the secret's value changed while it was down
    const request = await heldOrExited(held, second.run);
    second.run.child.kill("SIGKILL");
    await second.run.exited;
    await request.forward();
    await restartAndExpect("token-2", 2);
  }, 60_000);
});
