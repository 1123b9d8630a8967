import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFence } from "../../src/lock/fence.js";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";

// The holder's own count since its last renewal (fence), and whose process counts as gone (holder).

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-fence-holder-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe("the holder's fence", () => {
  it("counts from the latest renewal that began, and says how long the lapse was in its error", () => {
    let now = 10_000;
    const fence = createFence({
      leaseMs: 3_000,
      monotonic: () => now,
      since: now,
      what: "the test lock",
      onLapse: () => undefined,
    });
    now += 700;
    expect(fence.sinceRenewal()).toBe(700);
    fence.renewed(10_500);
    fence.renewed(10_200); // an older renewal landing late does not move it back
    expect(fence.sinceRenewal()).toBe(200);
    now += 2_000;
    expect(() => fence.check()).toThrow("lost the test lock: not renewed within 2000 ms");
  });
});

describe("a holder on this host", () => {
  it("of this host name in another process space (a container sharing the name) is never taken as gone", async () => {
    const gone = spawn(process.execPath, ["-e", ""]);
    const pid = await new Promise<number>((resolve) => gone.once("exit", () => resolve(gone.pid!)));
    const statusDir = join(root, "status");
    // Its pid is found nowhere here, but it names a process of that other PID namespace (or boot).
    const holder = { ...newHolder("plumb apply", Date.now()), pid, space: "pid:[4026532999]@another-boot" };
    await createLockDir(lockPathOf({ statusDir }), holder, 30_000);
    await expect(acquireStateLock({ statusDir }, { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining(`pid ${pid}`),
    });
    // The same record in this process space: gone, taken at once.
    await rm(lockPathOf({ statusDir }), { recursive: true });
    await createLockDir(lockPathOf({ statusDir }), { ...holder, space: newHolder("x", 0).space }, 30_000);
    const taken = await acquireStateLock({ statusDir }, { command: "plumb apply" });
    await taken.release();
  });

  it("whose process is alive is not taken over at once", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
    try {
      const statusDir = join(root, "status");
      const holder = { ...newHolder("plumb apply", Date.now()), pid: child.pid! };
      await createLockDir(lockPathOf({ statusDir }), holder, 30_000);
      await expect(acquireStateLock({ statusDir }, { command: "plumb apply" })).rejects.toMatchObject({
        code: "state-locked",
        message: expect.stringContaining(`pid ${child.pid}`),
      });
      expect(await readStateLock({ statusDir })).toMatchObject({ id: holder.id });
    } finally {
      child.kill();
    }
  });
});
