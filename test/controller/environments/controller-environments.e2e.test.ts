import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { gatedClock } from "../../support/fake-clock.js";
import { startController } from "../../../src/controller/controller.js";
import { DEFAULT_TENANT_ID } from "../../../src/control-plane/options.js";
import { startControlPlane } from "../../../src/control-plane/server.js";
import { acquireStateLock } from "../../../src/lock/index.js";
import { freePort } from "../../support/free-port.js";
import { startReceiver } from "../notify-receiver.js";
import { api, waitFor } from "../support.js";
import {
  environmentOptions,
  imageOn,
  namesOn,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
  writeTree,
} from "./fixture.js";

// One controller over a tree with two environments, against two real control planes: each
// environment's deployments are created once on its own control plane, an override's edit is one
// revision in that environment only, and a control plane that is down leaves the other converging.
// Counted on the control planes.

const h = useEnvironmentsHarness("plumb-ctl-envs-");
const same = (a: Record<string, number>, b: Record<string, number>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

it("reconciles every environment on its own control plane; an edit is one revision there only", async () => {
  await writeTree(h);
  const port = await freePort();
  const controller = await startController(environmentOptions(h, { listen: { host: "127.0.0.1", port } }));
  h.controllers.push(controller);
  const url = `http://127.0.0.1:${port}`;
  await waitFor("both settled", () => controller.ready(), 20_000);

  expect(await namesOn(h.staging, STAGING_KEY)).toEqual(["alpha", "beta"]);
  expect(await namesOn(h.prod, PROD_KEY)).toEqual(["alpha"]);
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:prod-1");
  expect(await imageOn(h.staging, STAGING_KEY, "alpha")).toBe("img/alpha:1");
  // Each environment's own status store, where plan --env and apply --env look.
  for (const env of ["staging", "prod"])
    expect(existsSync(join(h.dir, ".plumb", "status", env, "deployment.alpha.json"))).toBe(true);

  // prod's override moves: one revision in prod, none in staging.
  await writeAlpha(h, "img/alpha:prod-2");
  await waitFor("prod edited", async () => (await revisionsOn(h.prod, PROD_KEY)).alpha === 2, 20_000);
  await waitFor(
    "prod recorded",
    () => controller.status().objects.find((o) => o.environment === "prod")?.revision_status === "DEPLOYED",
  );
  await waitFor("queue idle", () => controller.status().queue.running === 0);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 2 });
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:prod-2");

  // /status, /readyz, /metrics and the page's records say it per environment.
  const status = controller.status();
  expect(status.environments?.map((e) => [e.environment, e.role, e.objects])).toEqual([
    ["prod", "leader", 1],
    ["staging", "leader", 2],
  ]);
  expect(status.objects.map((o) => `${o.environment}/${o.name}`).sort()).toEqual([
    "prod/alpha",
    "staging/alpha",
    "staging/beta",
  ]);
  const readyz = await fetch(`${url}/readyz`);
  expect(readyz.status).toBe(200);
  expect(await readyz.json()).toMatchObject({
    ready: true,
    environments: [
      { environment: "prod", role: "leader", ready: true },
      { environment: "staging", role: "leader", ready: true },
    ],
  });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^plumb_leader\{environment="prod"\} 1$/m);
  expect(metrics).toMatch(/^plumb_leader\{environment="staging"\} 1$/m);
  expect(metrics.match(/^# TYPE plumb_leader gauge$/gm)).toHaveLength(1); // one family, two samples
  expect(metrics).toMatch(/^plumb_objects\{sync="Synced",health="Healthy",environment="staging"\} 2$/m);
  const records = (await (await fetch(`${url}/ui/api/environments`)).json()) as {
    environments: Array<{ environment: string; objects: Array<{ name: string; version: unknown }> }>;
  };
  expect(records.environments.find((e) => e.environment === "prod")?.objects).toMatchObject([
    { name: "alpha", version: { image_uri: "img/alpha:prod-2" } },
  ]);
  // The status page's deployment × environment matrix, from each environment's records.
  const matrix = (await (await fetch(`${url}/ui/api/matrix`)).json()) as {
    environments: string[];
    rows: Array<{ deployment: string; cells: Array<{ version: string | null } | null> }>;
  };
  expect(matrix.environments).toEqual(["prod", "staging"]);
  expect(matrix.rows.map((r) => [r.deployment, ...r.cells.map((c) => c?.version ?? null)])).toEqual([
    ["alpha", "img/alpha:prod-2", "img/alpha:1"],
    ["beta", null, "img/beta:1"],
  ]);
  const header = (await (await fetch(`${url}/ui/api/header?env=staging`)).json()) as Record<string, unknown>;
  expect(header).toMatchObject({ environment: "staging", role: "leader" });
  expect(header.control_plane).toBe(h.staging.url);
}, 60_000);

it("a control plane that is down fails its environment only: the other converges", async () => {
  const down = `http://127.0.0.1:${await freePort()}`; // nothing listens there
  await writeTree(h, down);
  const receiver = await startReceiver();
  const controller = await startController(
    environmentOptions(h, { timeoutMs: 30_000, notify: { urls: [receiver.url] } }),
  ).catch(async (error: unknown) => {
    await receiver.close();
    throw error;
  });
  h.controllers.push(controller);
  // The failure is announced as prod's; staging's creates as staging's.
  await waitFor("events", () =>
    receiver.events().some((e) => e.event === "failed" && e.environment === "prod"),
  );
  await waitFor("staging applied", () =>
    receiver.events().some((e) => e.event === "applied" && e.environment === "staging"),
  );
  expect(receiver.events().find((e) => e.event === "failed")?.text).toContain(
    "Deployment alpha in prod failed",
  );
  await receiver.close();
  await waitFor(
    "staging converged",
    async () => same(await revisionsOn(h.staging, STAGING_KEY), { alpha: 1, beta: 1 }),
    20_000,
  );
  await waitFor(
    "prod's failure recorded",
    () => controller.status().objects.find((o) => o.environment === "prod")?.last_error,
    20_000,
  );
  expect(controller.status().objects.find((o) => o.environment === "prod")).toMatchObject({
    name: "alpha",
    sync: "Unknown",
  });
  // Staging keeps converging while prod stays down.
  await writeAlpha(h, "img/alpha:prod-1", "img/alpha:2");
  await waitFor(
    "staging edited",
    async () => (await revisionsOn(h.staging, STAGING_KEY)).alpha === 2,
    20_000,
  );
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 2, beta: 1 });
  expect(await namesOn(h.prod, PROD_KEY)).toEqual([]);
}, 60_000);

it("--env reconciles only the environments named", async () => {
  await writeTree(h);
  const controller = await startController(environmentOptions(h, { environments: ["prod"] }));
  h.controllers.push(controller);
  await waitFor("prod settled", () => controller.ready(), 20_000);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
  expect(await namesOn(h.staging, STAGING_KEY)).toEqual([]);
  expect(controller.status().environments?.map((e) => e.environment)).toEqual(["prod"]);
}, 60_000);

it("an environment whose API key is not set fails alone, and says why", async () => {
  await writeTree(h);
  const { PROD_KEY: _unset, ...env } = { ...process.env, STAGING_KEY, PROD_KEY };
  const controller = await startController(environmentOptions(h, {}, env));
  h.controllers.push(controller);
  await waitFor(
    "staging converged",
    async () => same(await revisionsOn(h.staging, STAGING_KEY), { alpha: 1, beta: 1 }),
    20_000,
  );
  await waitFor("prod failed", () => controller.status().environments?.find((e) => e.role === "failed"));
  expect(controller.status().environments?.find((e) => e.environment === "prod")).toMatchObject({
    role: "failed",
    error: expect.stringContaining("PROD_KEY, which is not set"),
  });
  expect(await namesOn(h.prod, PROD_KEY)).toEqual([]);
}, 60_000);

it("a lock held elsewhere for prod does not stop staging; prod starts once it is released", async () => {
  await writeTree(h);
  // Another writer (an apply --env prod) holds prod's state lock.
  const held = await acquireStateLock(
    { statusDir: join(h.dir, ".plumb", "status", "prod") },
    { command: "plumb apply" },
  );
  const controller = await startController(environmentOptions(h)).catch(async (error: unknown) => {
    await held.release();
    throw error;
  });
  h.controllers.push(controller);
  await waitFor(
    "staging converged",
    async () => same(await revisionsOn(h.staging, STAGING_KEY), { alpha: 1, beta: 1 }),
    20_000,
  );
  expect(controller.status().environments?.find((e) => e.environment === "prod")).toMatchObject({
    role: "standby",
    leader: expect.stringContaining("plumb apply"),
  });
  expect(await namesOn(h.prod, PROD_KEY)).toEqual([]);
  await held.release();
  await waitFor("prod converged", async () => (await revisionsOn(h.prod, PROD_KEY)).alpha === 1, 20_000);
  await waitFor("prod leads", () => controller.ready());
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
}, 60_000);

it("a replica leading no environment stamps its page header with the injected clock", async () => {
  await writeTree(h);
  const held = await acquireStateLock(
    { statusDir: join(h.dir, ".plumb", "status", "prod") },
    { command: "plumb apply" },
  );
  const port = await freePort();
  const at = Date.parse("2031-05-06T07:08:09.000Z");
  const clock = { now: () => at, sleep: systemClock.sleep };
  const controller = await startController(
    environmentOptions(h, { environments: ["prod"], listen: { host: "127.0.0.1", port }, clock }),
  ).catch(async (error: unknown) => {
    await held.release();
    throw error;
  });
  h.controllers.push(controller);
  try {
    await waitFor("prod stands by", () => controller.status().environments?.[0]?.role === "standby");
    const header = (await (await fetch(`http://127.0.0.1:${port}/ui/api/header`)).json()) as Record<
      string,
      unknown
    >;
    expect(header).toMatchObject({ role: "standby", now: "2031-05-06T07:08:09.000Z" });
  } finally {
    await held.release();
  }
}, 60_000);

// plumb_settled per environment (docs/controller.md, Metrics and Environments): 1 for an
// environment once every object of its first scan has been reconciled once, 0 for one whose first
// reconcile still waits, whatever the other environments say. prod's control plane holds its
// revisions (its clock frozen until open()); staging's deploy at once.

const settledOf = (metrics: string) =>
  [...metrics.matchAll(/^plumb_settled\{environment="([^"]+)"\} (\d)$/gm)]
    .map((m) => `${m[1]} ${m[2]}`)
    .sort();

it("plumb_settled says it per environment: staging settled while prod's first reconcile waits", async () => {
  const clock = gatedClock();
  await h.prod.stop();
  h.prod = await startControlPlane({
    revisionSeconds: 0.02,
    deploymentReadySeconds: 0,
    apiKeys: [{ key: PROD_KEY, tenants: [DEFAULT_TENANT_ID] }],
    clock,
  });
  await writeTree(h);
  const port = await freePort();
  const controller = await startController(
    environmentOptions(h, { listen: { host: "127.0.0.1", port }, timeoutMs: 60_000 }),
  );
  h.controllers.push(controller);
  const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

  // prod's alpha and its revision exist; the revision cannot advance: prod's reconcile is in flight.
  const prod = api(h.prod.url, PROD_KEY);
  const alpha = await waitFor("prod's alpha created", () => prod.deployment("alpha"), 20_000);
  await waitFor("prod's revision", async () =>
    (await prod.revisions(alpha.id)).length > 0 ? true : undefined,
  );
  await waitFor("staging settled", async () => settledOf(await metrics()).includes("staging 1"), 20_000);
  const held = await metrics();
  expect(settledOf(held)).toEqual(["prod 0", "staging 1"]);
  expect(held.match(/^# TYPE plumb_settled gauge$/gm)).toHaveLength(1); // one family, a sample each
  expect(held).not.toMatch(/^plumb_settled \d$/m); // no sample without its environment
  // As /status says it.
  expect(controller.status().environments?.map((e) => `${e.environment} ${e.settled ? 1 : 0}`)).toEqual([
    "prod 0",
    "staging 1",
  ]);
  expect(controller.status().settled).toBe(false);

  clock.open();
  await waitFor("prod settled", async () => settledOf(await metrics()).includes("prod 1"), 20_000);
  expect(settledOf(await metrics())).toEqual(["prod 1", "staging 1"]);
  expect(controller.status().settled).toBe(true);
}, 60_000);
