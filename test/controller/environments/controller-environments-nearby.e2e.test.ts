import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { acquireStateLock } from "../../../src/lock/index.js";
import { waitFor } from "../support.js";
import {
  environmentOptions,
  namesOn,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeTree,
} from "./fixture.js";

// With environments each environment's store is ENV/ under the status directory, and a store
// nearby is locked in its ENV/ too (docs/controller.md "Stores nearby"): while `plumb apply
// TREE/sub --env staging` holds sub's staging store, a controller on TREE stands staging by (it
// would send what is under sub as well) and leads prod. The apply is stood for by the real lock on
// that store. Counted on the two control planes.

const h = useEnvironmentsHarness("plumb-ctl-envs-nearby-");

it("an environment whose store nearby is held stands by; the other leads; it leads once that store is let go", async () => {
  await writeTree(h);
  await mkdir(join(h.dir, "sub"));
  const apply = await acquireStateLock(
    { statusDir: join(h.dir, "sub", ".plumb", "status", "staging") },
    { command: "plumb apply --env staging" },
  );
  const controller = await startController(environmentOptions(h));
  h.controllers.push(controller);
  const role = (env: string) => controller.status().environments?.find((e) => e.environment === env);
  await waitFor("prod settled", () => role("prod")?.settled);
  // staging either stands by (the lock nearby) or leads and settles (without it): whichever comes.
  const staging = await waitFor("staging standing by or settled", () => {
    const now = role("staging");
    return now?.role === "standby" || now?.settled ? now.role : undefined;
  });
  expect(await namesOn(h.staging, STAGING_KEY)).toEqual([]);
  expect(staging).toBe("standby");
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });

  await apply.release();
  await waitFor("staging settled", () => role("staging")?.settled, 20_000);
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });
}, 60_000);
