import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { acquireBranchLease } from "../../src/lock/branch/acquire.js";
import { readLease, writeLease } from "../../src/lock/branch/lease-record.js";
import { leaseRef, openRemote } from "../../src/lock/branch/remote.js";
import { readBranchLease } from "../../src/lock/branch/unlock.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { originWithClones } from "../support/git-clones.js";
import { repoTemplate } from "../support/repo-template.js";

// The status branch's lease lives in the git remote: writers on different machines (here: two
// clones with their own status directories) exclude each other through compare-and-swap pushes.

const exec = promisify(execFile);
let root: string;
let clones: string[];

// A remote and two clones (test/support/git-clones.ts), made once and copied per test
// (test/support/repo-template.ts).
const repositories = repoTemplate((dir) => originWithClones(dir));
afterAll(() => repositories.remove());
const copiedClones = async (dir: string) => {
  await repositories.copyTo(dir);
  return ["runner-a", "runner-b"].map((name) => join(dir, name));
};

/** A remote and two clones for each test of the describe that calls it. */
function repositoriesEach() {
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-lease-"));
    clones = await copiedClones(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));
}

const target = (clone: string) => ({
  statusDir: join(clone, ".plumb", "status"),
  root: clone,
  statusBranch: "plumb-status",
});
const lease = (clone: string) => ({ root: clone, branch: "plumb-status" });
const remoteRefs = async () =>
  (await exec("git", ["-C", clones[0]!, "ls-remote", "origin", "refs/plumb/*"])).stdout;

describe("the status branch lease", () => {
  repositoriesEach();
  it("one writer at a time across machines; the other is told who holds it; release frees it", async () => {
    const a = await acquireStateLock(target(clones[0]!), { command: "plumb apply" });
    expect(await remoteRefs()).toContain(leaseRef("plumb-status"));
    await expect(acquireStateLock(target(clones[1]!), { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining("leased by plumb apply"),
    });
    expect(await readStateLock(target(clones[1]!))).toMatchObject({ command: "plumb apply" });
    await a.release();
    expect(await remoteRefs()).toBe("");
    const b = await acquireStateLock(target(clones[1]!), { command: "plumb apply" });
    await b.release();
  }, 30_000);

  it("two acquirers racing: exactly one push lands", async () => {
    const options = { leaseMs: 30_000, renewMs: 10_000, timeoutMs: 0, retryMs: 50 };
    const results = await Promise.allSettled(
      clones.map((clone) => acquireBranchLease(lease(clone), newHolder("plumb apply", Date.now()), options)),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "state-locked" } });
    await (won[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
  }, 30_000);

  it("a lease its holder stopped renewing (killed) expires and is taken over", async () => {
    // Written as a holder on another machine leaves it when killed: one lease commit of 300 ms that
    // no one renews. (A live holder here would not do: its deadline watch renews on the spot when
    // git answers within the lease's last 30 ms, as it did on a quiet machine for 4-19 s.)
    const gone = await openRemote(lease(clones[0]!));
    const holder = { ...newHolder("plumb controller", Date.now()), host: "runner-7", space: "elsewhere" };
    const lease_ms = 300;
    const expires_at = new Date(Date.now() + lease_ms).toISOString();
    expect(
      await writeLease(gone, "plumb-status", { holder, lease_ms, renewals: 0, expires_at }, null),
    ).toBeTruthy();
    await gone.close();
    const started = Date.now();
    const taker = newHolder("plumb apply", Date.now());
    const taken = await acquireBranchLease(lease(clones[1]!), taker, {
      leaseMs: 30_000,
      renewMs: 10_000,
      timeoutMs: 20_000,
      retryMs: 100, // each look a few git processes: three or four within the 300 ms
    });
    // Judged by the stale lease's 300 ms, not the taker's 30 s (git's looks on a loaded machine
    // may take seconds).
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await readBranchLease(lease(clones[0]!))).toMatchObject({ command: "plumb apply", id: taker.id });
    await taken.release();
  }, 30_000);

  it("its scratch repository stays small however often it renews (unreferenced objects pruned)", async () => {
    const looseObjects = async (dir: string) =>
      Number(/^count: (\d+)/m.exec((await exec("git", ["-C", dir, "count-objects", "-v"])).stdout)?.[1]);
    const held = await acquireBranchLease(lease(clones[0]!), newHolder("plumb controller", Date.now()), {
      leaseMs: 3_000,
      renewMs: 150, // one new commit object per renewal
      timeoutMs: 0,
      retryMs: 50,
      pruneAfterMs: 0,
      pruneEvery: 5,
    });
    const renewals = async () => {
      await exec("git", ["-C", clones[1]!, "fetch", "-q", "origin", leaseRef("plumb-status")]);
      const message = (await exec("git", ["-C", clones[1]!, "log", "-1", "--format=%B", "FETCH_HEAD"]))
        .stdout;
      return Number(/"renewals":(\d+)/.exec(message)?.[1] ?? 0);
    };
    const deadline = Date.now() + 40_000;
    // Each look is a fetch and a log (git processes): a few looks per 1.8 s of renewals is enough.
    while ((await renewals()) < 12 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await renewals()).toBeGreaterThanOrEqual(12);
    // Without pruning one loose object per renewal (12 and more); with it, those since the last
    // prune, which ran at the 10th.
    expect(await looseObjects(held.scratch)).toBeLessThan(8);
    await held.release();
  }, 60_000);

  it("unlock --force ends the lease whoever holds it, in its place (force-unlock.test.ts)", async () => {
    const a = await acquireStateLock(target(clones[0]!), { command: "plumb apply" });
    expect(await forceUnlock(target(clones[1]!))).toMatchObject({ command: "plumb apply" });
    expect(await remoteRefs()).toContain(leaseRef("plumb-status"));
    await a.release();
  }, 30_000);
});

// (Its tests give readLease a git of their own: no repository.)
describe("reading a lease", () => {
  it("reads a ref the remote does not have (released at that moment, or never taken) as no lease: one fetch", async () => {
    const calls: string[] = [];
    const git = {
      raw: async (args: string[]) => {
        calls.push(args.join(" "));
        if (args.includes("fetch"))
          throw new Error("fatal: couldn't find remote ref refs/plumb/locks/plumb-status");
        throw new Error(`unexpected git ${args.join(" ")}`);
      },
    };
    const seen = await readLease(
      { git, net: git.raw, source: "origin" } as unknown as Parameters<typeof readLease>[0],
      "plumb-status",
    );
    expect(seen).toBeNull();
    expect(calls).toEqual([
      "-c maintenance.auto=false fetch --quiet --no-tags origin +refs/plumb/locks/plumb-status:refs/seen/lease",
    ]);
  });

  it("still fails on other fetch errors", async () => {
    const git = {
      raw: async () => {
        throw new Error("fatal: could not read Username: terminal prompts disabled");
      },
    };
    await expect(
      readLease(
        { git, net: git.raw, source: "origin" } as unknown as Parameters<typeof readLease>[0],
        "plumb-status",
      ),
    ).rejects.toMatchObject({ code: "status-branch-read-failed" });
  });
});

// The two offsets side by side, each with its own remote: each waits 8 s on a lease, computing little.
describe.concurrent("the status branch lease under clock skew", () => {
  for (const offset of [3_600_000, -3_600_000])
    it(`a waiter whose clock is ${offset > 0 ? "+" : "-"}1 h never takes a live lease`, async ({
      expect,
      onTestFinished,
    }) => {
      const own = await mkdtemp(join(tmpdir(), "plumb-lease-skew-"));
      onTestFinished(() => rm(own, { recursive: true, force: true }));
      const clones = await copiedClones(own);
      // Renewals are git pushes from this loaded worker: a 6 s lease (one every 2 s, a lapse 4 s
      // after the last) watched for 8 s, more than a lease. The waiter looks every 400 ms (each look
      // a fetch and a log): five looks per renewal, every lease commit seen.
      const options = { leaseMs: 6_000, renewMs: 2_000, timeoutMs: 0, retryMs: 400 };
      const live = await acquireBranchLease(
        lease(clones[0]!),
        newHolder("plumb controller", Date.now()),
        options,
      );
      const skewed = {
        now: () => Date.now() + offset,
        sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
      };
      await expect(
        acquireBranchLease(lease(clones[1]!), newHolder("plumb controller", Date.now()), {
          ...options,
          timeoutMs: 8_000,
          clock: skewed,
        }),
      ).rejects.toMatchObject({ code: "state-locked" });
      live.assertHeld();
      expect(live.lost.aborted).toBe(false);
      await live.release();
    }, 30_000);
});
