import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startClaim } from "../../../src/controller/environments/environment-claim.js";
import { PlumbError } from "../../../src/errors.js";
import { acquireStateLock, readStateLock } from "../../../src/lock/index.js";
import { memoryLogger, waitFor } from "../support.js";

// An environment's claim whose store cannot start once its lock is taken (its Environment refused
// meanwhile: environment-name-collision while a standby waited for the lock) gives the lock back:
// it kept it, renewed, so no replica (itself included) could lead the environment again.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-claim-"));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

it("releases the lock when its store does not start", async () => {
  const target = { statusDir: join(dir, "prod") };
  let starts = 0;
  const claim = startClaim({
    name: "prod",
    target,
    leaseMs: 1_000,
    mayTake: () => true,
    check: () => undefined,
    start: () => {
      starts++;
      return Promise.reject(new PlumbError("environment-name-collision", "refused meanwhile"));
    },
    changed: () => undefined,
    retryMs: 60_000,
    graceMs: 100,
    log: memoryLogger().logger,
  });
  try {
    await waitFor("the start failed", () => claim.role() === "failed");
    expect(starts).toBe(1);
    expect(claim.error()).toContain("environment-name-collision");
    await waitFor("the lock released", async () => (await readStateLock(target)) === null, 5_000);
    const taken = await acquireStateLock(target, { command: "plumb apply", timeoutMs: 0 });
    await taken.release();
  } finally {
    await claim.stop(100);
  }
});
