import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runUnlock } from "../../src/cli/sync/unlock.js";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";

// `plumb unlock`: names the holder, refuses without --force, ends the lock with it.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-unlock-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const io = () => {
  let out = "";
  return { stdout: { write: (t: string) => (out += t) }, out: () => out };
};

it("says when nothing is locked", async () => {
  const captured = io();
  expect(await runUnlock(root, {}, captured)).toBe(0);
  expect(captured.out()).toContain("is not locked");
});

it("names the holder and refuses without --force; --force ends the lock and says whose it was", async () => {
  const statusDir = join(root, ".plumb", "status");
  const lock = await acquireStateLock({ statusDir }, { command: "plumb controller" });
  await expect(runUnlock(root, {}, io())).rejects.toMatchObject({
    code: "state-locked",
    message: expect.stringMatching(/held by plumb controller \(pid \d+ on .+\).*plumb unlock --force/),
  });
  const captured = io();
  expect(await runUnlock(root, { force: true }, captured)).toBe(0);
  expect(captured.out()).toMatch(
    /Ended the state lock of .*, held by plumb controller .*: if that process still runs/,
  );
  // Ended, not removed: a waiter takes it once unrenewed for a lease (test/lock/force-unlock.test.ts).
  expect(await readStateLock({ statusDir })).toMatchObject({ command: "plumb controller", forced: true });
  // Shown as such, not as a lock to force again.
  const after = io();
  expect(await runUnlock(root, {}, after)).toBe(0);
  expect(after.out()).toMatch(
    /^The state lock of .*, held by plumb controller .*, was ended by plumb unlock --force: the next writer takes the store once it has gone a whole lease unrenewed/,
  );
  await lock.release();
});
