import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { acquireBranchLease } from "../../src/lock/branch/acquire.js";
import type { BranchLease } from "../../src/lock/branch/held-lease.js";
import { readLease } from "../../src/lock/branch/lease-record.js";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { forceBranchUnlock, readBranchLease } from "../../src/lock/branch/unlock.js";
import { newHolder } from "../../src/lock/holder.js";
import { fakeClock } from "../support/fake-clock.js";
import { repoTemplate } from "../support/repo-template.js";

// The status branch lease's paths (src/lock/branch/): what its commit says, whose lease may be taken
// (ours, a gone local process's, one that is no plumb lease), a waiter's pacing, the push fence, a
// remote that does not answer, and the scratch repository. One bare remote and one clone.

const exec = promisify(execFile);
let root: string;
let origin: string;
let clone: string;

// Made once, copied per test (test/support/repo-template.ts): every test starts from the same two.
const repositories = repoTemplate(async (dir) => {
  const bare = join(dir, "origin.git");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", bare]);
  const seed = join(dir, "seed");
  await exec("git", ["init", "-q", "--initial-branch=main", seed]);
  await exec("git", ["-C", seed, ...IDENTITY, "commit", "--allow-empty", "-qm", "init"]);
  await exec("git", ["-C", seed, "push", "-q", bare, "main"]);
  await exec("git", ["clone", "-q", bare, join(dir, "runner")]);
  await rm(seed, { recursive: true, force: true });
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lease-paths-"));
  await repositories.copyTo(root);
  origin = join(root, "origin.git");
  clone = join(root, "runner");
});
afterEach(() => rm(root, { recursive: true, force: true }));
afterAll(() => repositories.remove());

const IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t"];
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const REF = leaseRef("plumb-status");
const target = () => ({ root: clone, branch: "plumb-status" });
const refNow = async () =>
  (
    await exec("git", ["--git-dir", origin, "rev-parse", "--verify", "-q", REF]).catch(() => ({ stdout: "" }))
  ).stdout.trim();
const leaseNow = async () =>
  JSON.parse((await exec("git", ["--git-dir", origin, "log", "-1", "--format=%B", REF])).stdout) as unknown;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
const options = { leaseMs: 30_000, renewMs: 1e9, timeoutMs: 0, retryMs: 50 };

/**
 * A lease ref written by someone else: a commit with this message, set in the remote itself. (A
 * push, even --force, checks the ref is still what the remote advertised: a holder renewing every
 * 50 ms moved it in between on a loaded run, "cannot lock ref ... is at X but expected Y".)
 */
async function foreignLease(message: string) {
  const sha = (
    await exec("git", ["--git-dir", origin, ...IDENTITY, "commit-tree", "-m", message, EMPTY_TREE])
  ).stdout.trim();
  await exec("git", ["--git-dir", origin, "update-ref", REF, sha]);
  return sha;
}

/** The pid of a process that has ended (`true`: a node process would cost ~50 ms of CPU for nothing). */
async function deadPid(): Promise<number> {
  const child = execFile("true");
  return new Promise<number>((resolve) => child.once("exit", () => resolve(child.pid!)));
}

describe("the lease commit", () => {
  it("says who holds it, for how long, how often it was renewed and when it would expire (for people)", async () => {
    const now = 1_700_000_000_000;
    const clock: Clock = { now: () => now, sleep: () => Promise.reject(new Error("slept")) };
    const holder = newHolder("plumb controller", now);
    const lease = await acquireBranchLease(target(), holder, { ...options, clock });
    expect(await leaseNow()).toEqual({
      holder,
      store: ".plumb/status",
      lease_ms: 30_000,
      renewals: 0,
      expires_at: new Date(now + 30_000).toISOString(),
    });
    const swaps: Array<{ ref: string; expected: string; message: string; tree?: string }> = [];
    const first = await refNow();
    await lease.withLease(async (swap) => {
      swaps.push(swap);
      return swap.expected;
    });
    expect(swaps).toEqual([
      {
        ref: REF,
        expected: first,
        message: JSON.stringify({
          holder,
          store: ".plumb/status",
          lease_ms: 30_000,
          renewals: 1,
          expires_at: new Date(now + 30_000).toISOString(),
        }),
        // The empty tree, in SHA-1 (the scratch repository's object format here): no git process.
        tree: EMPTY_TREE,
      },
    ]);
    await lease.release();
    expect(await refNow()).toBe("");
  }, 30_000);
});

describe("whose lease is free to take", () => {
  it("our own (the same holder again) at once", async () => {
    const holder = newHolder("plumb apply", Date.now());
    const first = await acquireBranchLease(target(), holder, options);
    const again = await acquireBranchLease(target(), holder, options);
    await again.release();
    expect(await refNow()).toBe("");
    await first.release();
  }, 30_000);

  it("a process of this host that is gone at once", async () => {
    const gone = { ...newHolder("plumb apply", Date.now()), host: hostname(), pid: await deadPid() };
    await foreignLease(JSON.stringify({ holder: gone, lease_ms: 30_000, expires_at: "" }));
    const lease = await acquireBranchLease(target(), newHolder("plumb controller", Date.now()), options);
    expect(await readBranchLease(target())).toMatchObject({ command: "plumb controller" });
    await lease.release();
  }, 30_000);

  it("our own once ended by --force: not at once (it may still be sending), named as forced free", async () => {
    const holder = newHolder("plumb apply", Date.now());
    const first = await acquireBranchLease(target(), holder, options);
    expect(await forceBranchUnlock(target())).toMatchObject({ id: holder.id });
    await expect(acquireBranchLease(target(), holder, options)).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining(
        "was forced free (plumb unlock --force) from plumb apply (pid " +
          `${process.pid} on ${hostname()}) since ${holder.since}, writing its store `,
      ),
    });
    await expect(acquireBranchLease(target(), holder, options)).rejects.toMatchObject({
      message: expect.stringContaining(
        "it is free once it has gone 30 s unrenewed; wait, or pass --lock-timeout 40s",
      ),
    });
    await first.release();
  }, 30_000);

  it("unlock --force of a process of this host that is gone: deleted at once", async () => {
    const gone = { ...newHolder("plumb apply", Date.now()), host: hostname(), pid: await deadPid() };
    await foreignLease(JSON.stringify({ holder: gone, lease_ms: 30_000, expires_at: "" }));
    expect(await forceBranchUnlock(target())).toMatchObject({ id: gone.id });
    expect(await refNow()).toBe("");
  }, 30_000);

  it("a process of this host name in another process space (a container sharing the name): not at once", async () => {
    const other = { host: hostname(), pid: await deadPid(), space: "pid:[4026532999]@another-boot" };
    const there = { ...newHolder("plumb apply", Date.now()), ...other };
    await foreignLease(JSON.stringify({ holder: there, lease_ms: 30_000, expires_at: "" }));
    await expect(
      acquireBranchLease(target(), newHolder("plumb controller", Date.now()), options),
    ).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining("leased by plumb apply"),
    });
  }, 30_000);

  const noHolder = ["{}", "5", "not a lease", '{"holder":{"pid":1}}', '{"holder":{"host":"build-7"}}'];
  for (const message of noHolder)
    it(`a lease commit that names no holder (${message}) is another process's, taken once unchanged for a lease`, async () => {
      await foreignLease(message);
      await expect(
        acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options),
      ).rejects.toMatchObject({
        code: "state-locked",
        message: expect.stringContaining("is leased by another plumb process"),
      });
      expect(await readBranchLease(target())).toBeNull();
      const lease = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), {
        ...options,
        leaseMs: 300,
        timeoutMs: 20_000,
        retryMs: 100, // each look a few git processes: three or four within the 300 ms
      });
      await lease.release();
    }, 30_000);
});

describe("a waiter", () => {
  it("without a timeout is refused at once; with one, looks again every retryMs, the last wait what is left", async () => {
    const held = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
    const refusedAtOnce: Clock = { now: () => 1_000, sleep: () => Promise.reject(new Error("slept")) };
    await expect(
      acquireBranchLease(target(), newHolder("plumb apply", Date.now()), {
        ...options,
        clock: refusedAtOnce,
      }),
    ).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining("leased by plumb apply"),
    });
    const clock = fakeClock(1_000);
    const sleeps = clock.sleeps;
    await expect(
      acquireBranchLease(target(), newHolder("plumb apply", Date.now()), {
        ...options,
        timeoutMs: 2_000,
        retryMs: 700,
        clock,
      }),
    ).rejects.toMatchObject({ code: "state-locked" });
    expect(sleeps).toEqual([700, 700, 600]);
    await held.release();
  }, 30_000);

  it("is told the store the holder writes, its control characters escaped; an older plumb's lease names none", async () => {
    const holder = { ...newHolder("plumb apply", Date.now()), host: "build-7" };
    const refusal = async () =>
      String(
        await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options).catch(
          (error: unknown) => error,
        ),
      );
    await foreignLease(JSON.stringify({ holder, store: "a\u001b[31m/.plumb/status", lease_ms: 30_000 }));
    const named = await refusal();
    expect(named).toContain(", writing its store a\\u001b[31m/.plumb/status (one lease for every store");
    expect(named).not.toContain("\u001b");
    await foreignLease(JSON.stringify({ holder, store: 7, lease_ms: 30_000 }));
    expect(await refusal()).toContain(`since ${holder.since}; wait, pass --lock-timeout`);
    await foreignLease(JSON.stringify({ holder, lease_ms: 30_000 }));
    expect(await refusal()).toContain(`since ${holder.since}; wait, pass --lock-timeout`);
  }, 30_000);

  it("whose signal was aborted stops with its reason", async () => {
    const held = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
    const stop = new AbortController();
    stop.abort(new Error("stopping"));
    await expect(
      acquireBranchLease(target(), newHolder("plumb apply", Date.now()), { ...options, signal: stop.signal }),
    ).rejects.toThrow("stopping");
    await held.release();
  }, 30_000);
});

describe("the push fence", () => {
  it("a status push that did not land loses the lease: refused, and every write after it", async () => {
    const lease = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
    await expect(lease.withLease(async () => null)).rejects.toMatchObject({
      code: "lock-lost",
      message: expect.stringContaining(
        "lost the lease of status branch plumb-status: another writer took it",
      ),
    });
    expect(lease.lost.aborted).toBe(true);
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    await lease.release();
  }, 30_000);

  it("a status push that landed moves the lease: the next one expects its commit", async () => {
    const lease = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
    const expected: string[] = [];
    await lease.withLease(async (swap) => (expected.push(swap.expected), "a-new-lease-commit"));
    await lease.withLease(async (swap) => (expected.push(swap.expected), swap.expected));
    expect(expected[1]).toBe("a-new-lease-commit");
    await lease.release();
  }, 30_000);
});

describe("renewals", () => {
  it("a remote that does not answer is not a takeover: kept until the renew deadline, then lost as lapsed, never renewed again", async () => {
    const t = { now: 1_000, reads: 0 };
    const lease = await acquireBranchLease(target(), newHolder("plumb controller", Date.now()), {
      ...options,
      leaseMs: 1_200, // renew deadline 800 ms
      renewMs: 20,
      monotonic: () => (t.reads++, t.now),
    });
    await rename(origin, `${origin}.away`);
    const reads = t.reads;
    for (let i = 0; i < 500 && t.reads < reads + 3; i++) await tick(20);
    expect(lease.lost.aborted).toBe(false);
    t.now += 1_000;
    for (let i = 0; i < 500 && !lease.lost.aborted; i++) await tick(20);
    expect((lease.lost.reason as Error).message).toContain(
      "lost the lease of status branch plumb-status: not renewed within 800 ms",
    );
    await rename(`${origin}.away`, origin);
    const after = await refNow();
    await tick(300);
    expect(await refNow()).toBe(after);
    await lease.release();
  }, 30_000);

  it("one that finds the lease taken by another writer loses it", async () => {
    const lease = await acquireBranchLease(target(), newHolder("plumb controller", Date.now()), {
      ...options,
      renewMs: 50,
    });
    const theirs = await foreignLease(JSON.stringify({ holder: newHolder("plumb apply", Date.now()) }));
    for (let i = 0; i < 500 && !lease.lost.aborted; i++) await tick(20);
    expect(lease.lost.reason).toMatchObject({
      code: "lock-lost",
      message: expect.stringContaining(
        "lost the lease of status branch plumb-status: another writer took it",
      ),
    });
    await lease.release();
    expect(await refNow()).toBe(theirs);
  }, 30_000);

  it("one in flight that finds the lease already moved by a renewal on the spot does not count it lost", async () => {
    const t = { now: 1_000, reads: 0 };
    const ref: { lease?: BranchLease } = {};
    let armed = false;
    const errors: unknown[] = [];
    const lease = (ref.lease = await acquireBranchLease(target(), newHolder("plumb controller", Date.now()), {
      ...options,
      leaseMs: 30_000,
      renewMs: 200,
      // The timer's renewal reads the clock before its commit and push: a write then renews on the
      // spot (synchronously) first, so the renewal's push finds the lease moved.
      monotonic: () => {
        t.reads++;
        if (armed) {
          armed = false;
          queueMicrotask(() => {
            try {
              ref.lease!.assertHeld();
            } catch (error) {
              errors.push(error);
            }
          });
        }
        return t.now;
      },
    }));
    t.now += 25_000; // past the renew deadline (20 s), within the lease
    armed = true;
    for (let i = 0; i < 500 && armed; i++) await tick(20);
    const reads = t.reads;
    for (let i = 0; i < 500 && t.reads === reads; i++) await tick(20); // the next one began
    expect(errors).toEqual([]);
    expect(lease.lost.aborted).toBe(false);
    await lease.release();
  }, 30_000);

  it("on the spot: not tried once a whole lease passed on the holder's clock, even exactly", async () => {
    let now = 1_000;
    const lease = await acquireBranchLease(target(), newHolder("plumb controller", Date.now()), {
      ...options,
      monotonic: () => now,
    });
    const first = await refNow();
    now += 30_000;
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(await refNow()).toBe(first);
    await lease.release();
  }, 30_000);
});

describe("the remote", () => {
  it("a look is one fetch and one log: the id and the lease from the commit fetched", async () => {
    const calls: string[] = [];
    const message = { holder: { id: "h", host: "elsewhere", pid: 7 }, expires_at: "x", lease_ms: 9_000 };
    const git = {
      raw: async (args: string[]) => {
        calls.push(args.join(" "));
        if (args[0] === "log") return `abc123\n${JSON.stringify(message, null, 1)}\n\n`;
        return "";
      },
    };
    const seen = await readLease(
      { git, net: git.raw, source: "the-remote" } as unknown as Parameters<typeof readLease>[0],
      "plumb-status",
    );
    expect(seen).toEqual({ sha: "abc123", lease: message });
    expect(calls).toEqual([
      `-c maintenance.auto=false fetch --quiet --no-tags the-remote +${REF}:refs/seen/lease`,
      "log -1 --format=%H%n%B refs/seen/lease",
    ]);
  });

  it("a lease commit whose message is not a lease reads as a lease of unknown holder", async () => {
    const git = { raw: async (args: string[]) => (args[0] === "log" ? "abc123\n{}\n" : "") };
    expect(
      await readLease(
        { git, net: git.raw, source: "origin" } as unknown as Parameters<typeof readLease>[0],
        "plumb-status",
      ),
    ).toEqual({ sha: "abc123", lease: null });
  });

  it("another fetch error is not looked at again", async () => {
    const calls: string[] = [];
    const git = {
      raw: async (args: string[]) => {
        calls.push(args.find((a) => a === "fetch" || a === "log") ?? args[0]!);
        throw new Error("fatal: could not read Username: terminal prompts disabled");
      },
    };
    await expect(
      readLease(
        { git, net: git.raw, source: "origin" } as unknown as Parameters<typeof readLease>[0],
        "plumb-status",
      ),
    ).rejects.toMatchObject({
      code: "status-branch-read-failed",
      message: expect.stringContaining("could not read the lease of status branch plumb-status"),
    });
    expect(calls).toEqual(["fetch"]);
  });

  it("a push refused for another reason than a race is status-branch-push-failed", async () => {
    const hook = join(origin, "hooks", "pre-receive");
    await mkdir(join(origin, "hooks"), { recursive: true });
    await writeFile(hook, "#!/bin/sh\necho refused by policy >&2\nexit 1\n");
    await chmod(hook, 0o755);
    await expect(
      acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options),
    ).rejects.toMatchObject({
      code: "status-branch-push-failed",
      message: expect.stringContaining("could not write the lease of status branch plumb-status"),
    });
  }, 30_000);

  it("unlock --force of a lease naming no holder: removed, nobody named", async () => {
    await foreignLease("not a lease");
    expect(await forceBranchUnlock(target())).toBeNull();
    expect(await refNow()).toBe("");
  }, 30_000);

  it("unlock --force without a lease: nobody held it, nothing pushed", async () => {
    expect(await forceBranchUnlock(target())).toBeNull();
    expect(await refNow()).toBe("");
  }, 30_000);

  it("unlock --force of a live holder's lease: ended in its place, named, not deleted", async () => {
    const lease = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
    const held = await refNow();
    expect(await forceBranchUnlock(target())).toMatchObject({ command: "plumb apply" });
    const ended = await refNow();
    expect(ended).not.toBe("");
    expect(ended).not.toBe(held);
    await lease.release(); // its compare-and-swap finds the ended lease: left
    expect(await refNow()).toBe(ended);
  }, 30_000);

  it("its scratch repository is removed at release and when taking the lease fails", async () => {
    const scratch = join(root, "tmp");
    await mkdir(scratch);
    const before = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    try {
      expect(await readBranchLease(target())).toBeNull();
      expect(await forceBranchUnlock(target())).toBeNull();
      expect(await readdir(scratch)).toEqual([]);
      const lease = await acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options);
      expect(await readdir(scratch)).toEqual([expect.stringMatching(/^plumb-lease-/)]);
      await expect(
        acquireBranchLease(target(), newHolder("plumb apply", Date.now()), options),
      ).rejects.toMatchObject({ code: "state-locked" });
      expect(await readdir(scratch)).toHaveLength(1);
      await lease.release();
      expect(await readdir(scratch)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  }, 30_000);
});
