import { spawn } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { patientTime } from "../support/patient-time.js";

let root: string;
let statusDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-"));
  statusDir = join(root, ".plumb", "status");
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = () => ({ statusDir });

describe("the state lock of a local status directory", () => {
  it("admits one holder; a second is refused with state-locked naming the holder and the fix", async () => {
    const first = await acquireStateLock(target(), { command: "plumb apply" });
    await expect(acquireStateLock(target(), { command: "plumb adopt" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringMatching(
        /held by plumb apply \(pid \d+ on .+\) since \d{4}-.*plumb unlock --force/,
      ),
    });
    expect(await readStateLock(target())).toMatchObject({ command: "plumb apply", pid: process.pid });
    await first.release();
    await first.release(); // idempotent
    expect(await readStateLock(target())).toBeNull();
    const again = await acquireStateLock(target(), { command: "plumb adopt" });
    await again.release();
  });

  it("lives beside the status directory: the store never reads it", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    expect((await stat(lockPathOf(target()))).isDirectory()).toBe(true);
    expect(lockPathOf(target())).toBe(`${statusDir}.lock`);
    expect((await loadStatusStore(statusDir)).problems).toEqual([]);
    await lock.release();
  });

  it("waits up to --lock-timeout and gets the lock once the holder releases it", async () => {
    const first = await acquireStateLock(target(), { command: "plumb apply" });
    const waiting = acquireStateLock(target(), { command: "plumb apply", timeoutMs: 10_000, retryMs: 20 });
    setTimeout(() => void first.release(), 100);
    const second = await waiting;
    expect(second.holder.command).toBe("plumb apply");
    await second.release();
  });

  it("takes over at once from a holder on this host whose process is gone (kill -9)", async () => {
    const child = spawn(process.execPath, ["-e", ""]);
    const deadPid = await new Promise<number>((resolve) => child.once("exit", () => resolve(child.pid!)));
    // The lock as a killed process leaves it: its directory, a holder naming a pid that is gone.
    await createLockDir(
      lockPathOf(target()),
      { ...newHolder("plumb apply", Date.now()), pid: deadPid },
      30_000,
    );
    const taken = await acquireStateLock(target(), { command: "plumb controller" });
    expect(taken.holder.command).toBe("plumb controller");
    await taken.release();
  });

  it("--force ends a lock whoever holds it, and the holder learns it lost it", async () => {
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 5_000,
      renewMs: 1_000,
    });
    expect(await forceUnlock(target())).toMatchObject({ command: "plumb controller" });
    // Ended, not removed: free once a waiter saw it unrenewed for the holder's lease (force-unlock.test.ts).
    expect(await readStateLock(target())).toMatchObject({ command: "plumb controller" });
    // The renewal (every second) may already have found it gone: the abort came before this line.
    if (!lock.lost.aborted)
      await new Promise<void>((resolve) =>
        lock.lost.addEventListener("abort", () => resolve(), { once: true }),
      );
    expect((lock.lost.reason as { code: string }).code).toBe("lock-lost");
    await lock.release();
  }, 15_000);

  it("a waiter gives up when its signal aborts (a standby controller stopping)", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    const stop = new AbortController();
    const waiting = acquireStateLock(target(), {
      command: "plumb controller",
      timeoutMs: Infinity,
      signal: stop.signal,
      retryMs: 10,
    });
    setTimeout(() => stop.abort(new Error("stopping")), 50);
    await expect(waiting).rejects.toThrow("stopping");
    await lock.release();
  });
});

describe("the local lock's edges", () => {
  it("a second release() after a takeover leaves the next holder's lock alone", async () => {
    const first = await acquireStateLock(target(), { command: "plumb apply" });
    await first.release();
    const second = await acquireStateLock(target(), { command: "plumb controller" });
    await first.release();
    expect(await readStateLock(target())).toMatchObject({ command: "plumb controller" });
    // A holder that lost its lock (forced, taken over) releases without touching the new one.
    await forceUnlock(target()); // then taken once a lease passed
    const third = await acquireStateLock(target(), {
      command: "plumb adopt",
      timeoutMs: 600_000,
      ...patientTime(),
    });
    await second.release();
    expect(await readStateLock(target())).toMatchObject({ command: "plumb adopt" });
    await third.release();
  });

  it("a lock path that cannot be written is lock-io-error, not someone else's lock", async () => {
    const file = join(root, "a-file");
    await writeFile(file, "");
    await expect(
      acquireStateLock({ statusDir: join(file, "status") }, { command: "plumb apply" }),
    ).rejects.toMatchObject({ code: "lock-io-error", message: expect.stringContaining("--status-dir") });
  });
});
