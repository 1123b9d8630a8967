import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { acquireStateLock, readStateLock } from "../../../src/lock/index.js";
import { freePort } from "../../support/free-port.js";
import { waitFor, writeDoc } from "../support.js";
import {
  environmentDoc,
  environmentOptions,
  imageOn,
  namesOn,
  PROD_KEY,
  PROD_KEY_2,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
  writeTree,
} from "./fixture.js";

// A running controller follows the Environment documents in git, against two real control planes:
// one added starts, one removed stops (its lock released, nothing deleted, even with --prune), a
// changed api_key source restarts its client and store (drained: no send twice), name_suffix is
// followed without a restart, and an invalid document keeps the last valid one. Counted on the
// control planes; each edit is followed by a rescan (as the file watcher does).

const h = useEnvironmentsHarness("plumb-ctl-follow-");
const prodLock = () => ({ statusDir: join(h.dir, ".plumb", "status", "prod") });
const roleOf = (
  c: { status(): { environments?: Array<{ environment: string; role: string }> } },
  env: string,
) => c.status().environments?.find((e) => e.environment === env)?.role;

it("an Environment added in git starts; one removed stops, its lock released and nothing deleted", async () => {
  await writeDoc(h.dir, "env-staging.yaml", environmentDoc("staging", h.staging.url, "STAGING_KEY"));
  await writeDoc(h.dir, "alpha.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "alpha" },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img/alpha:1" } },
  });
  const controller = await startController(environmentOptions(h, { prune: true }));
  h.controllers.push(controller);
  await waitFor("staging settled", () => controller.ready(), 20_000);
  expect(controller.status().environments?.map((e) => e.environment)).toEqual(["staging"]);

  // prod is added: its deployments are created on its own control plane, once.
  await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", h.prod.url, "PROD_KEY"));
  await controller.rescan();
  await waitFor("prod created", async () => (await revisionsOn(h.prod, PROD_KEY)).alpha === 1, 20_000);
  await waitFor("prod settled", () => roleOf(controller, "prod") === "leader" && controller.ready(), 20_000);
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1 });

  // prod is removed: it stops here, its lock is free, and nothing is deleted on its control plane.
  await rm(join(h.dir, "env-prod.yaml"));
  await controller.rescan();
  await waitFor("prod stopped", () => roleOf(controller, "prod") === undefined);
  await waitFor("prod's lock released", async () => (await readStateLock(prodLock())) === null, 20_000);
  const taken = await acquireStateLock(prodLock(), { command: "plumb apply", timeoutMs: 0 });
  await taken.release();
  // An edit is applied in staging only: prod is no longer reconciled here.
  await writeDoc(h.dir, "alpha.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "alpha" },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img/alpha:2" } },
  });
  await controller.rescan();
  await waitFor(
    "staging edited",
    async () => (await revisionsOn(h.staging, STAGING_KEY)).alpha === 2,
    20_000,
  );
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:1");
}, 90_000);

it("a changed api_key source restarts prod's client and store, drained first: each change sent once", async () => {
  await writeTree(h);
  const env = { ...process.env, STAGING_KEY, PROD_KEY, PROD_KEY_2, WRONG_KEY: "not-a-key-0123456789abcdef" };
  const controller = await startController(environmentOptions(h, {}, env));
  h.controllers.push(controller);
  await waitFor("both settled", () => controller.ready(), 20_000);
  const firstHolder = (await readStateLock(prodLock()))?.id;

  // An edit of prod's override and its key rotated, in one commit: the edit is sent once.
  await writeAlpha(h, "img/alpha:prod-2");
  await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", h.prod.url, "PROD_KEY_2"));
  await controller.rescan();
  await waitFor("prod edited", async () => (await imageOn(h.prod, PROD_KEY, "alpha")) === "img/alpha:prod-2");
  await waitFor("prod restarted", async () => (await readStateLock(prodLock()))?.id !== firstHolder, 20_000);
  await waitFor("prod settled again", () => controller.ready(), 20_000);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 2 });
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });

  // The key it reads now is the one git names: a key the control plane refuses sends nothing...
  await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", h.prod.url, "WRONG_KEY"));
  await writeAlpha(h, "img/alpha:prod-3");
  await controller.rescan();
  await waitFor(
    "prod refused",
    () => controller.status().objects.find((o) => o.environment === "prod")?.last_error,
    20_000,
  );
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 2 });
  // ...and once git names a good key again, the edit is sent, once.
  await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", h.prod.url, "PROD_KEY"));
  await controller.rescan();
  await waitFor("prod edited again", async () => (await revisionsOn(h.prod, PROD_KEY)).alpha === 3, 20_000);
  await waitFor("prod settled at last", () => controller.ready(), 20_000);
  await waitFor(
    "queue idle",
    () => controller.status().queue.running + controller.status().queue.pending === 0,
  );
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 3 });
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:prod-3");
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });
}, 90_000);

it("name_suffix is followed without a restart; an invalid Environment keeps its last valid one", async () => {
  await writeTree(h);
  const port = await freePort();
  const controller = await startController(environmentOptions(h, { listen: { host: "127.0.0.1", port } }));
  h.controllers.push(controller);
  await waitFor("both settled", () => controller.ready(), 20_000);
  const holder = (await readStateLock(prodLock()))?.id;

  // A name_suffix re-plans prod's deployments (alpha-p is created) on the same store and client.
  await writeDoc(
    h.dir,
    "env-prod.yaml",
    environmentDoc("prod", h.prod.url, "PROD_KEY", "  name_suffix: -p\n"),
  );
  await controller.rescan();
  await waitFor("alpha-p created", async () => (await namesOn(h.prod, PROD_KEY)).includes("alpha-p"), 20_000);
  expect((await readStateLock(prodLock()))?.id).toBe(holder);

  // A literal key is refused in git: prod runs on with the last valid document, and says why.
  await writeDoc(
    h.dir,
    "env-prod.yaml",
    environmentDoc("prod", h.prod.url, "PROD_KEY").replace("{env: PROD_KEY}", "hunter2-literal-key"),
  );
  await controller.rescan();
  // A watch scan may catch the save half written first ("file is empty": kept, not a removal).
  const invalid = await waitFor("reported", () =>
    controller.status().environments?.find((e) => e.invalid?.includes("api_key")),
  );
  expect(invalid).toMatchObject({
    environment: "prod",
    role: "leader",
    invalid: expect.stringMatching(/^env-prod\.yaml:7: spec\.api_key must not be written in git/),
  });
  expect(JSON.stringify(controller.status())).not.toContain("hunter2");
  const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect(readyz.status).toBe(200);
  // Its deployments are still reconciled, with the last valid document (its name_suffix).
  await writeAlpha(h, "img/alpha:prod-2");
  await controller.rescan();
  await waitFor(
    "alpha-p edited",
    async () => (await imageOn(h.prod, PROD_KEY, "alpha-p")) === "img/alpha:prod-2",
    20_000,
  );
  expect((await readStateLock(prodLock()))?.id).toBe(holder);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1, "alpha-p": 2 });
  // Fixed: the problem is gone.
  await writeDoc(
    h.dir,
    "env-prod.yaml",
    environmentDoc("prod", h.prod.url, "PROD_KEY", "  name_suffix: -p\n"),
  );
  await controller.rescan();
  await waitFor("fixed", () => !controller.status().environments?.some((e) => e.invalid));
  // An emptied file (what a save caught half written reads as) is not a removal either.
  await writeDoc(h.dir, "env-prod.yaml", "");
  await controller.rescan();
  expect(controller.status().environments?.find((e) => e.environment === "prod")).toMatchObject({
    role: "leader",
    invalid: "env-prod.yaml:1: file is empty",
  });
  expect((await readStateLock(prodLock()))?.id).toBe(holder);
  // Counted on prod's control plane: nothing deleted, nothing sent.
  await waitFor(
    "queue idle",
    () => controller.status().queue.running + controller.status().queue.pending === 0,
  );
  expect(await namesOn(h.prod, PROD_KEY)).toEqual(expect.arrayContaining(["alpha", "alpha-p"]));
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1, "alpha-p": 2 });
}, 90_000);

it("--prune deletes a deployment narrowed out of prod's metadata.environments there alone", async () => {
  await writeTree(h); // alpha everywhere, beta in staging only
  const controller = await startController(environmentOptions(h, { prune: true }));
  h.controllers.push(controller);
  await waitFor("both settled", () => controller.ready(), 20_000);
  expect(await namesOn(h.prod, PROD_KEY)).toEqual(["alpha"]);

  // alpha no longer runs in prod: its file still defines it (for staging), so for prod it is
  // removed from git, not an emptied file (which stopped every prune of prod).
  await writeDoc(h.dir, "alpha.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "alpha", environments: ["staging"] },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img/alpha:1" } },
  });
  await controller.rescan();
  await waitFor("alpha pruned from prod", async () => (await namesOn(h.prod, PROD_KEY)).length === 0, 20_000);
  expect(await namesOn(h.staging, STAGING_KEY)).toEqual(["alpha", "beta"]);
}, 60_000);
