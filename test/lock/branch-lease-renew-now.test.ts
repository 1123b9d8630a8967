import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitStop, type GitStop } from "../../src/git/stoppable-git.js";
import { acquireBranchLease } from "../../src/lock/branch/acquire.js";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { newHolder } from "../../src/lock/holder.js";
import { type GitHttpServer, startGitHttpServer } from "../controller/git-http-server.js";
import { waitFor } from "../controller/support.js";
import { processesNaming } from "../support/processes.js";

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
let front: Server | undefined;
let backend: GitHttpServer | undefined;
afterEach(async () => {
  front?.closeAllConnections();
  front?.close();
  front = undefined;
  await backend?.close();
  backend = undefined;
  await rm(root, { recursive: true, force: true });
});

const LEASE = 30_000;
const REF = leaseRef("plumb-status");
const refNow = async () => (await exec("git", ["--git-dir", origin, "rev-parse", REF])).stdout.trim();

async function hold(leaseMs = LEASE, gitStop?: GitStop) {
  let now = 1_000;
  const lease = await acquireBranchLease(
    { root: clone, branch: "plumb-status", gitStop },
    newHolder("plumb controller", Date.now()),
    {
      leaseMs,
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

/** What is left of the processes naming `marker` once they had 3 s to go (killed then: without the fix, git's helper). */
async function leftBehind(marker: string): Promise<number[]> {
  const none = () => processesNaming(marker).length === 0;
  await waitFor("the renewal's git processes gone", none, 3_000).catch(() => undefined);
  const left = processesNaming(marker);
  for (const pid of left) process.kill(pid, "SIGKILL");
  return left;
}

/**
 * The runner's origin served over smart HTTP (git http-backend) behind a front that, once `stall`
 * is set, reads each request and never answers: git's HTTP helper (git-remote-http) then waits.
 * The marker is in the URL, so in the command line of every git process talking to it.
 */
async function stallingOrigin() {
  const marker = `renew-${randomUUID()}`;
  const served = join(root, "served");
  await exec("git", ["clone", "-q", "--bare", origin, join(served, marker, "origin.git")]);
  backend = await startGitHttpServer(served, "bot", "tok");
  const to = new URL(backend.url);
  const auth = `Basic ${Buffer.from("bot:tok").toString("base64")}`;
  const state = { stall: false, stalled: 0 };
  front = createServer((req, res) => {
    if (state.stall) return void state.stalled++;
    const headers = { ...req.headers, authorization: auth };
    const forward = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => front!.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/${marker}/origin.git`;
  await exec("git", ["-C", clone, "remote", "set-url", "origin", url]);
  return { marker, state };
}

// renewNow's git ran synchronously with a timeout (execFileSync), which ends git alone: its HTTP
// helper, waiting on a remote that says nothing, lived on past the timeout (up to the stall limit,
// a minute) after the lease had given up on that push. It now runs in a process group of its own,
// ended as a whole, as the lease's other git commands over the network (stoppable-git.ts).
describe.runIf(process.platform === "linux")("a renewal on the spot against a remote that stalls", () => {
  it("ends at its timeout with every process it started: none left", async () => {
    const { marker, state } = await stallingOrigin();
    const { lease, advance } = await hold(5_000);
    state.stall = true;
    advance(4_500); // past the renew deadline: 500 ms of the lease left for the push
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(await leftBehind(marker)).toEqual([]);
    // The push had reached the remote, which said nothing (the front, in this process, reads it only
    // now: the renewal blocked the event loop).
    await waitFor("the push's request at the front", () => state.stalled > 0);
    state.stall = false;
    await lease.release();
  }, 30_000);

  it("after the controller's stop runs at most its time after the stop (afterStopMs), then the next is not tried", async () => {
    const { marker, state } = await stallingOrigin();
    const stopping = new AbortController();
    const stop = createGitStop(stopping.signal, 300);
    const { lease, advance } = await hold(60_000, stop);
    state.stall = true;
    stopping.abort();
    advance(54_000); // 6 s of the lease left: the stop's 300 ms bound the push instead
    const startedAt = Date.now();
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    expect(stop.unanswered).toBe(true); // the lease's release after it is not tried
    expect(await leftBehind(marker)).toEqual([]);
    await lease.release();
  }, 30_000);
});

// A renewal that hangs (the remote reads the push and says nothing) kept the holder's `lost` signal
// quiet until git gave up (the stall limit, a minute), far past the lease: the requests in flight,
// which listen on it, went on after a waiter could have taken over. Just before the lease runs out
// the holder now acts as a write would (fence.ts watchDeadline): the lease is lost, `lost` aborted.
describe.runIf(process.platform === "linux")("a renewal that hangs past the renew deadline", () => {
  it("aborts `lost` before the lease runs out, not when git gives up", async () => {
    const { state } = await stallingOrigin();
    const leaseMs = 6_000;
    const lease = await acquireBranchLease(
      { root: clone, branch: "plumb-status" },
      newHolder("plumb apply", Date.now()),
      { leaseMs, renewMs: leaseMs / 3, timeoutMs: 0, retryMs: 50 },
    );
    const acquired = performance.now(); // the lease counts from before this
    state.stall = true; // the first renewal hangs
    await waitFor("lost aborted", () => lease.lost.aborted, 20_000);
    // A waiter takes over once it has seen the same lease for leaseMs, from after it was taken.
    expect(performance.now() - acquired).toBeLessThan(leaseMs);
    expect(lease.lost.reason).toMatchObject({ code: "lock-lost" });
    front?.closeAllConnections(); // the hanging push ends, so the release does
    state.stall = false;
    await lease.release();
  }, 40_000);
});
