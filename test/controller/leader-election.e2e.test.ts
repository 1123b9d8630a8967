import { afterEach, beforeAll, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { freePort } from "../support/free-port.js";
import { assertBuilt, type CliRun, listeningPort, spawnCli } from "../support/built-cli.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { api, container, waitFor, writeDoc } from "./support.js";

// Two controllers on one status store: one leads, the other stands by (/readyz 503, plumb_leader 0)
// and reconciles nothing; it takes over when the leader stops (SIGTERM releases the lock) or is
// killed (kill -9 on this host: its pid is gone). Every change gets exactly one revision.

const h = useControllerHarness("plumb-leader-");
const others: Array<Promise<Controller>> = [];
const children: CliRun[] = [];
beforeAll(assertBuilt);
afterEach(async () => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill("SIGKILL");
  for (const other of others.splice(0)) await (await other.catch(() => null))?.stop(1_000);
});

const revisions = async () => {
  const client = api(h.cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
};

const readyz = async (url: string) =>
  ((await (await fetch(`${url}/readyz`).catch(() => null))?.json().catch(() => ({}))) ?? {}) as {
    role?: string;
  };
/** /status: settled once every object of the first scan was reconciled once. */
const statusOf = async (url: string) =>
  ((await (await fetch(`${url}/status`).catch(() => null))?.json().catch(() => ({}))) ?? {}) as {
    settled?: boolean;
  };

it("a second controller stands by, reconciles nothing, and leads once the first stops", async () => {
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
  const options = fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir } });
  h.controller = await startController(options);
  await waitFor("leader ready", () => h.controller!.ready());

  const port = await freePort();
  const standby = startController({ ...options, listen: { host: "127.0.0.1", port } });
  others.push(standby);
  const url = `http://127.0.0.1:${port}`;
  // It listens from the start (not ready, "starting"), then says it stands by.
  await waitFor("standby serving", async () => (await readyz(url)).role === "standby");
  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(503);
  expect(await ready.json()).toMatchObject({
    role: "standby",
    leader: expect.stringContaining("plumb controller"),
  });
  expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^plumb_leader 0$/m);
  // Its status page says it is on standby and who leads; it lists nothing of its own.
  expect((await fetch(`${url}/`)).status).toBe(200);
  expect(await (await fetch(`${url}/ui/api/header`)).json()).toMatchObject({
    role: "standby",
    leader: expect.stringContaining("plumb controller"),
  });
  expect(await (await fetch(`${url}/ui/api/objects`)).json()).toMatchObject({ total: 0 });

  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:2"));
  await waitFor("leader applied the change", async () => (await revisions()).alpha === 2);

  await h.controller.stop(1_000); // releases the lock at once
  h.controller = await standby;
  await waitFor("standby took over", async () => (await fetch(`${url}/readyz`)).status === 200);
  expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^plumb_leader 1$/m);
  expect(await (await fetch(`${url}/ui/api/header`)).json()).toMatchObject({ role: "leader" });
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:3"));
  await waitFor("new leader applied the change", async () => (await revisions()).alpha === 3);
  expect(await revisions()).toEqual({ alpha: 3 });
}, 30_000);

it("after kill -9 of the leading built CLI, the standby takes over and applies each change once", async () => {
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
  const env = { PLUMB_API_URL: h.cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, PLUMB_LOG_LEVEL: "info" };
  const start = () => {
    const args = ["controller", "--dir", h.dir, "--listen", "127.0.0.1:0", "--debounce", "20ms"];
    // A lease far longer than a takeover under load: the standby leads because the pid is gone.
    const run = spawnCli([...args, "--poll-interval", "20ms", "--lock-lease", "60s"], env);
    children.push(run);
    return run;
  };
  const leader = start();
  const leaderUrl = `http://127.0.0.1:${await listeningPort(leader)}`;
  await waitFor("leader settled", async () => (await statusOf(leaderUrl)).settled, 20_000);
  const standby = start();
  const standbyUrl = `http://127.0.0.1:${await listeningPort(standby)}`;
  await waitFor("standby up", async () => (await readyz(standbyUrl)).role === "standby", 20_000);

  leader.child.kill("SIGKILL");
  await leader.exited;
  const killedAt = Date.now();
  await waitFor("standby leads", async () => (await fetch(`${standbyUrl}/readyz`)).status === 200, 40_000);
  // Its pid is gone: no need to wait for the lease (60 s). Ready in a second or two, 30 s when loaded;
  // it was 5 s with a 5 s lease, the takeover's first reconcile included.
  expect(Date.now() - killedAt).toBeLessThan(30_000);
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:2"));
  await waitFor("applied once", async () => (await revisions()).alpha === 2, 20_000);
  expect(standby.output()).toContain("took over the state lock");
  expect(await revisions()).toEqual({ alpha: 2 });
}, 60_000);
