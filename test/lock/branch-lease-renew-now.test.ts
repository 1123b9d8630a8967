import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireBranchLease, leaseRef } from "../../src/lock/branch-lease.js";
import { newHolder } from "../../src/lock/holder.js";

// The status branch's lease renews on the spot: a holder whose event loop was blocked past its renew
// deadline (no timer renewal ran) but whose lease has not run out on its own monotonic clock makes
// one compare-and-swap push of the lease ref at its next write instead of giving up a lease nobody
// took. If someone else moved the ref meanwhile, the push fails and the write is refused as before.
// The holder's monotonic clock is injected: advancing it is the blocked loop.

const exec = promisify(execFile);
let root: string;
let origin: string;
let clone: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-renew-now-"));
  origin = join(root, "origin.git");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", origin]);
  const seed = join(root, "seed");
  await exec("git", ["init", "-q", "--initial-branch=main", seed]);
  await exec("git", [
    "-C",
    seed,
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "commit",
    "--allow-empty",
    "-qm",
    "i",
  ]);
  await exec("git", ["-C", seed, "push", "-q", origin, "main"]);
  clone = join(root, "runner");
  await exec("git", ["clone", "-q", origin, clone]);
});
afterEach(() => rm(root, { recursive: true, force: true }));

const LEASE = 30_000;
const REF = leaseRef("plumb-status");
const refNow = async () => (await exec("git", ["--git-dir", origin, "rev-parse", REF])).stdout.trim();

async function hold() {
  let now = 1_000;
  const lease = await acquireBranchLease(
    { root: clone, branch: "plumb-status" },
    newHolder("plumb controller", Date.now()),
    {
      leaseMs: LEASE,
      renewMs: 1e9, // the timer never fires: only the write path renews
      timeoutMs: 0,
      retryMs: 50,
      monotonic: () => now,
    },
  );
  return { lease, advance: (ms: number) => (now += ms) };
}

describe("the status branch lease past its renew deadline", () => {
  it("renews on the spot when nobody took it: the write goes on, the ref moved, the lease is good again", async () => {
    const { lease, advance } = await hold();
    const first = await refNow();
    advance(LEASE * 0.9); // blocked past the renew deadline (2/3), not past the lease
    expect(() => lease.assertHeld()).not.toThrow();
    expect(lease.lost.aborted).toBe(false);
    const renewed = await refNow();
    expect(renewed).not.toBe(first);
    // Counted from that renewal: good for another renew deadline, with no further push.
    advance(LEASE * 0.5);
    lease.assertHeld();
    expect(await refNow()).toBe(renewed);
    await lease.release();
  }, 30_000);

  it("someone else moved the ref: the CAS fails, the write is refused and the lease lost; their ref stays", async () => {
    const { lease, advance } = await hold();
    // Another writer took the lease (e.g. plumb unlock --force and a new holder): a ref of its own.
    const seed = join(root, "seed");
    const theirs = (
      await exec("git", [
        "-C",
        seed,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit-tree",
        "-m",
        "{}",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
      ])
    ).stdout.trim();
    await exec("git", ["-C", seed, "push", "-q", "--force", origin, `${theirs}:${REF}`]);
    advance(LEASE * 0.9);
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(lease.lost.aborted).toBe(true);
    expect(await refNow()).toBe(theirs);
    await lease.release();
    expect(await refNow()).toBe(theirs); // its release is a CAS too: the other holder's lease stays
  }, 30_000);

  it("past the whole lease on its own clock it does not try: a waiter may have taken it over", async () => {
    const { lease, advance } = await hold();
    const first = await refNow();
    advance(LEASE + 1);
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(await refNow()).toBe(first); // no push was made
    await lease.release();
  }, 30_000);
});
