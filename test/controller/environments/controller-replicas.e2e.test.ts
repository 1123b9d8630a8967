import { afterEach, beforeAll, expect, it } from "vitest";
import { type Controller, startController } from "../../../src/controller/controller.js";
import { assertBuilt, type CliRun, listeningPort, spawnCli } from "../../support/built-cli.js";
import { waitFor } from "../support.js";
import {
  environmentOptions,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
  writeTree,
} from "./fixture.js";

// Controller replicas share the environments: each environment's lock is held by one replica, the
// spread is even (two replicas, two environments: one each), and when a replica stops or is killed
// its environments fail over to the other. Counted on the two control planes: each deployment
// created once, each change one revision, whoever leads.

const h = useEnvironmentsHarness("plumb-ctl-replicas-");
const children: CliRun[] = [];
beforeAll(assertBuilt);
afterEach(() => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill("SIGKILL");
});

const led = (c: Controller) =>
  (c.status().environments ?? []).filter((e) => e.role === "leader").map((e) => e.environment);

const counts = async () => ({
  staging: await revisionsOn(h.staging, STAGING_KEY),
  prod: await revisionsOn(h.prod, PROD_KEY),
});
const sorted = (o: Record<string, Record<string, number>>) =>
  JSON.stringify(Object.entries(o).map(([k, v]) => [k, Object.entries(v).sort()]));

it("two replicas take one environment each; one stopping hands its environment to the other", async () => {
  await writeTree(h);
  const first = await startController(environmentOptions(h, { lockLeaseMs: 1_000, replicaId: "first" }));
  h.controllers.push(first);
  await waitFor("first leads both", () => led(first).length === 2, 20_000);
  const second = await startController(environmentOptions(h, { lockLeaseMs: 1_000, replicaId: "second" }));
  h.controllers.push(second);
  await waitFor("one each", () => led(first).length === 1 && led(second).length === 1, 20_000);
  expect([...led(first), ...led(second)].sort()).toEqual(["prod", "staging"]);
  expect(second.status().replicas).toMatchObject({ self: "second", live: 2, share: 1 });
  await waitFor("settled", () => first.ready() && second.ready(), 20_000);
  expect(sorted(await counts())).toBe(sorted({ staging: { alpha: 1, beta: 1 }, prod: { alpha: 1 } }));

  // The first stops (SIGTERM): its environment fails over; each change is still one revision.
  await first.stop(1_000);
  h.controllers.splice(h.controllers.indexOf(first), 1);
  await waitFor("second leads both", () => led(second).length === 2, 20_000);
  await writeAlpha(h, "img/alpha:prod-2", "img/alpha:2");
  await waitFor(
    "both edited",
    async () => sorted(await counts()) === sorted({ staging: { alpha: 2, beta: 1 }, prod: { alpha: 2 } }),
    20_000,
  );
  await waitFor(
    "queue idle",
    () => second.status().queue.running === 0 && second.status().queue.pending === 0,
  );
  expect(sorted(await counts())).toBe(sorted({ staging: { alpha: 2, beta: 1 }, prod: { alpha: 2 } }));
}, 90_000);

it("after kill -9 of a replica (built CLI), the other takes its environment and applies each change once", async () => {
  await writeTree(h);
  const env = { STAGING_KEY, PROD_KEY, PLUMB_LOG_LEVEL: "info" };
  const start = async () => {
    const args = ["controller", "--dir", h.dir, "--listen", "127.0.0.1:0", "--debounce", "20ms"];
    const run = spawnCli([...args, "--poll-interval", "20ms", "--lock-lease", "2s"], env);
    children.push(run);
    return { run, url: `http://127.0.0.1:${await listeningPort(run)}` };
  };
  const roles = async (url: string) => {
    const res = await fetch(`${url}/readyz`).catch(() => null);
    const body = ((await res?.json().catch(() => null)) ?? {}) as {
      environments?: Array<{ environment: string; role: string }>;
    };
    return (body.environments ?? []).filter((e) => e.role === "leader").map((e) => e.environment);
  };
  const a = await start();
  await waitFor("a leads both", async () => (await roles(a.url)).length === 2, 30_000);
  const b = await start();
  await waitFor(
    "one each",
    async () => (await roles(a.url)).length === 1 && (await roles(b.url)).length === 1,
    30_000,
  );
  await waitFor(
    "created once",
    async () => sorted(await counts()) === sorted({ staging: { alpha: 1, beta: 1 }, prod: { alpha: 1 } }),
    20_000,
  );

  a.run.child.kill("SIGKILL");
  await a.run.exited;
  await waitFor("b leads both", async () => (await roles(b.url)).length === 2, 20_000);
  await writeAlpha(h, "img/alpha:prod-2", "img/alpha:2");
  await waitFor(
    "both edited",
    async () => sorted(await counts()) === sorted({ staging: { alpha: 2, beta: 1 }, prod: { alpha: 2 } }),
    20_000,
  );
  expect(b.run.output()).toContain("took this environment's state lock");
  expect(sorted(await counts())).toBe(sorted({ staging: { alpha: 2, beta: 1 }, prod: { alpha: 2 } }));
}, 120_000);
