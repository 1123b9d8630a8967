import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { waitToLead } from "../../src/controller/leadership.js";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";
import { memoryLogger, waitFor } from "./support.js";

// Leadership's catch-up (leadership.ts): a standby that takes over runs it (a git source's fetch)
// before it leads, so it does not reconcile the checkout it made when it started; a leader that
// never stood by has just cloned, and does not. A catch-up that fails lets the lock go.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-leadership-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const store = () => ({ statusDir: join(dir, ".plumb", "status") });
const lead = (catchUp: () => Promise<unknown>, log = memoryLogger()) =>
  waitToLead({
    location: { root: dir },
    http: undefined,
    statusToken: undefined,
    leaseMs: undefined,
    log: log.logger,
    signal: undefined,
    catchUp,
  });

it("a controller that leads at once does not catch up: its checkout is new", async () => {
  let calls = 0;
  const lock = await lead(async () => calls++);
  expect(calls).toBe(0);
  await lock.release();
});

it("a standby that takes over catches up once, after it holds the lock and before it leads", async () => {
  const other = await acquireStateLock(store(), { command: "plumb controller (leader)" });
  const log = memoryLogger();
  const held: Array<string | undefined> = [];
  const leading = lead(async () => held.push((await readStateLock(store()))?.command), log);
  await waitFor("standing by", () => log.text().includes("standby: another controller leads"));
  expect(held).toEqual([]);
  await other.release();
  const lock = await leading;
  expect(held).toEqual(["plumb controller"]);
  await lock.release();
});

it("a catch-up that fails: the lock is let go and the error is the controller's", async () => {
  const other = await acquireStateLock(store(), { command: "plumb controller (leader)" });
  const log = memoryLogger();
  const leading = lead(() => Promise.reject(new Error("fetch failed")), log);
  await waitFor("standing by", () => log.text().includes("standby: another controller leads"));
  await other.release();
  await expect(leading).rejects.toThrow("fetch failed");
  expect(await readStateLock(store())).toBeNull();
});
