import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFence } from "../../src/lock/fence.js";
import { type Lease, writeLease } from "../../src/lock/branch/lease-record.js";
import { leaseRef, openRemote, type Remote } from "../../src/lock/branch/remote.js";
import { assertHeld, renew, type Renewal } from "../../src/lock/branch/renewal.js";
import { newHolder } from "../../src/lock/holder.js";
import { originWithClones } from "../support/git-clones.js";

// renewal.ts against a real git remote (a bare repository), its state set as the moments it guards
// leave it: a renewal whose push landed while its answer is still on the way (inFlight), a holder
// past its renew deadline (the monotonic clock, injected). Two writers of the lease are simulated
// by pushing the lease ref from the test, as another holder's push would.

const exec = promisify(execFile);
const LEASE = 30_000;
const BRANCH = "plumb-status";
const REF = leaseRef(BRANCH);

let root: string;
let origin: string;
let remote: Remote;
let now: number;
let prunes: number;

const lease = (): Lease => ({
  holder: newHolder("plumb apply", Date.now()),
  expires_at: "2030-01-01T00:00:00Z",
});
const refNow = async () => (await exec("git", ["--git-dir", origin, "rev-parse", REF])).stdout.trim();

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-renewal-"));
  origin = join(root, "origin.git");
  const [clone] = await originWithClones(root, ["runner"]);
  remote = await openRemote({ root: clone!, branch: BRANCH });
  now = 0;
  prunes = 0;
});

afterEach(async () => {
  await remote.close();
  await rm(root, { recursive: true, force: true });
});

/** A holder of the lease `current` (written to the remote), renewed last at monotonic 0. */
async function holding(): Promise<Renewal> {
  const current = (await writeLease(remote, BRANCH, lease(), null))!;
  const lost = new AbortController();
  const monotonic = () => now;
  return {
    remote,
    branch: BRANCH,
    next: lease,
    options: { leaseMs: LEASE, renewMs: 1e9, timeoutMs: 0, retryMs: 50, startedAt: 0 },
    monotonic,
    lost,
    fence: createFence({
      leaseMs: LEASE,
      monotonic,
      since: 0,
      what: `the lease of status branch ${BRANCH}`,
      onLapse: (error) => lost.abort(error),
    }),
    current,
    renewing: Promise.resolve(),
    inFlight: null,
    timer: undefined,
    released: false,
    prune: async () => void prunes++,
  };
}

describe("a renewal on the spot while the timer's renewal is in flight", () => {
  it("counts the renewal in flight that landed first as its own: the write goes on", async () => {
    const r = await holding();
    // The timer's renewal pushed at 19 s; its push landed, its answer is not back yet.
    const landed = (await writeLease(remote, BRANCH, lease(), r.current))!;
    r.inFlight = { commit: landed, started: 19_000 };
    now = 21_000; // past the renew deadline (20 s), within the lease
    expect(() => assertHeld(r)).not.toThrow();
    expect(r.current).toBe(landed);
    expect(r.lost.signal.aborted).toBe(false);
    // Its own push (expecting the older lease) did not land: the ref is the renewal's.
    expect(await refNow()).toBe(landed);
    // Good until the renew deadline after that renewal began (19 s + 20 s), not after.
    now = 38_000;
    expect(() => assertHeld(r)).not.toThrow();
  });

  it("refuses the write when the ref is another writer's, not the renewal's in flight", async () => {
    const r = await holding();
    const ours = (await exec("git", ["--git-dir", origin, "rev-parse", REF])).stdout.trim();
    const theirs = (await writeLease(remote, BRANCH, lease(), ours))!;
    r.inFlight = { commit: "0".repeat(40), started: 19_000 }; // ours, still on its way
    now = 21_000;
    expect(() => assertHeld(r)).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(r.current).toBe(ours);
    expect(await refNow()).toBe(theirs);
  });

  it("refuses the write when nothing is in flight and the ref moved", async () => {
    const r = await holding();
    const theirs = (await writeLease(remote, BRANCH, lease(), r.current))!;
    now = 21_000;
    expect(() => assertHeld(r)).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(await refNow()).toBe(theirs);
  });
});

describe("the timer's renewal", () => {
  it("marks its push in flight while it runs, and not after it landed; prunes after it", async () => {
    const r = await holding();
    const seen: Array<Renewal["inFlight"]> = [];
    const net = remote.net;
    // What the holder's state is while the push runs (held-lease.ts's watch reads it then).
    r.remote = { ...remote, net: (args: readonly string[]) => (seen.push(r.inFlight), net(args)) };
    now = 5_000;
    await renew(r);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.started).toBe(5_000);
    expect(seen[0]?.commit).toBe(r.current);
    expect(r.inFlight).toBeNull();
    expect(await refNow()).toBe(r.current);
    expect(prunes).toBe(1);
    // Counted from when it began: good until 5 s + 20 s.
    now = 24_000;
    expect(r.fence.valid()).toBe(true);
  });

  it("loses the lease when another writer moved the ref, and prunes nothing", async () => {
    const r = await holding();
    const before = r.current;
    await writeLease(remote, BRANCH, lease(), before);
    await renew(r);
    expect(r.lost.signal.aborted).toBe(true);
    expect(r.lost.signal.reason).toMatchObject({ code: "lock-lost" });
    expect(r.current).toBe(before);
    expect(r.inFlight).toBeNull();
    expect(prunes).toBe(0);
  });
});
