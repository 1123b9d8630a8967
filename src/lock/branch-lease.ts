import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Clock, systemClock } from "../clock.js";
import { escapeControls, PlumbError } from "../errors.js";
import { statusGitEnv } from "../git/git-env.js";
import { gitAt, gitFailure, networkGit, repoInfo } from "../git/status-branch.js";
import { type GitStop, runNetworkGitSync } from "../git/stoppable-git.js";
import { createFence, type Fence, lapsedError, renewDeadlineOf } from "./fence.js";
import { describeHolder, isDeadLocalHolder } from "./holder.js";
import { type LockHolder, type Monotonic, systemMonotonic } from "./lock-types.js";
import { createObserver } from "./observer.js";
import type { PushFence } from "../git/fenced-push.js";
import { scratchPrune } from "./scratch-prune.js";

// The lease of a status branch, held in the git remote itself so that writers on different machines
// (CI runners, pods) exclude each other: the ref refs/plumb/locks/<branch> points to a commit whose
// message is {holder, store, lease_ms, renewals, expires_at}. Every change is a compare-and-swap push
// (--force-with-lease=<ref>:<sha seen>, empty: must not exist), so of two writers racing only one
// push lands. The holder renews it (a new commit) every third of the lease and stops writing two
// thirds of a lease after its last renewal began (fence.ts). A waiter takes it over only after it has
// seen the same commit for the holder's whole lease_ms on its own monotonic clock (observer.ts), or at
// once when the holder is a process of this host that is gone; expires_at is for people to read,
// never compared: clocks of different machines need not agree.
//
// One lease per branch (per environment: BRANCH@ENV), whichever store on it its holder writes:
// writers in separate clones on a tree and a directory of it (both reconcile what is under it)
// exclude each other through it, as the local locks of the stores nearby do on one machine
// (locks-in-order.ts). `store` (the holder's store on the branch) is for the refusal to name.

export type LeaseTarget = {
  root: string;
  branch: string;
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the lease's git commands over the network end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** With environments: the holder's store is ENV/ of the manifest directory's (named in the lease). */
  environment?: string | undefined;
};
type Lease = {
  holder: LockHolder;
  /** The holder's store on the branch (REL/.plumb/status/(ENV/)); absent in an older plumb's lease. */
  store?: string;
  expires_at: string;
  lease_ms?: number;
  renewals?: number;
};
type Seen = { sha: string; lease: Lease | null } | null;

export const leaseRef = (branch: string) => `refs/plumb/locks/${branch}`;

/** A scratch repository and the git environment (credentials) to talk to the remote. */
async function openRemote(target: LeaseTarget) {
  const info = await repoInfo(target);
  const env = await statusGitEnv(info, target.gitEnv);
  const scratch = await mkdtemp(join(tmpdir(), "plumb-lease-"));
  const git = gitAt(env.env, scratch);
  // Stryker disable next-line BooleanLiteral: equivalent, a scratch repository's work tree is never used
  await git.init(true);
  // The lease commits carry no files: the empty tree, written once into the scratch repository.
  const tree = (await git.raw(["hash-object", "-t", "tree", "-w", "/dev/null"])).trim();
  return {
    source: info.source,
    store: info.pathOnBranch,
    git,
    /** ls-remote, fetch and push: in a process group the controller's stop ends (stoppable-git.ts). */
    net: networkGit({ gitEnv: env.env, gitStop: target.gitStop }, scratch),
    tree,
    scratch,
    /**
     * git run synchronously, for a renewal on the spot (renewNow): the same environment, and as `net`
     * a process group of its own, ended as a whole at the timeout and bounded by the controller's stop.
     */
    gitSync: (args: string[], timeoutMs: number) =>
      runNetworkGitSync(args, { cwd: scratch, env: env.env, timeoutMs, stop: target.gitStop }),
    close: async () => {
      await env.dispose();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

type Remote = Awaited<ReturnType<typeof openRemote>>;

/** What git says when another push changed the ref first (file and smart-HTTP remotes). */
const LOST_RACE =
  /stale info|cannot lock ref|reference already exists|failed to update ref|but expected|fetch first/i;

/** Exported for the race test (a lease released between ls-remote and fetch). */
export async function readLease(
  remote: Pick<Remote, "git" | "net" | "source">,
  branch: string,
): Promise<Seen> {
  try {
    return await readLeaseUnchecked(remote, branch);
  } catch (error) {
    throw gitFailure(
      error,
      "status-branch-read-failed",
      `could not read the lease of status branch ${branch}`,
    );
  }
}

/** The lease ref went away between ls-remote and fetch: its holder released it meanwhile. */
const RELEASED_MEANWHILE = /couldn't find remote ref/i;

async function readLeaseUnchecked(
  remote: Pick<Remote, "git" | "net" | "source">,
  branch: string,
  attempt = 0,
): Promise<Seen> {
  const ref = leaseRef(branch);
  // Stryker disable next-line MethodExpression: equivalent, the first field is the same with or without the line's end
  const out = (await remote.net(["ls-remote", remote.source, ref])).trim();
  // Stryker disable next-line Regex: equivalent, ls-remote separates the sha by one tab
  const sha = out.split(/\s+/)[0];
  if (!sha) return null;
  try {
    await remote.net(["fetch", "--quiet", "--no-tags", remote.source, `+${ref}:refs/seen/lease`]);
  } catch (error) {
    // Look again: released (no ref now) or re-taken (a new one to read). Seen once in CI as a
    // standby's startup failure while the leader released on SIGTERM.
    if (attempt < 3 && RELEASED_MEANWHILE.test(String(error)))
      return readLeaseUnchecked(remote, branch, attempt + 1);
    throw error;
  }
  const message = await remote.git.raw(["log", "-1", "--format=%B", "refs/seen/lease"]);
  return { sha, lease: parseLease(message) };
}

/** A lease commit's message, or null when it names no holder (not ours to read: treated as expired). */
function parseLease(message: string): Lease | null {
  try {
    const data = JSON.parse(message) as { holder?: Partial<LockHolder> } | null;
    if (typeof data?.holder?.host !== "string" || typeof data.holder.pid !== "number") return null;
    return data as Lease;
  } catch {
    return null;
  }
}

const IDENTITY = ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];

/**
 * CAS: points the lease ref at a new lease commit if it still is `expected` (null: absent).
 * `onCommit` learns the new commit before the push leaves (a renewal in flight, see renewNow).
 */
async function writeLease(
  remote: Remote,
  branch: string,
  lease: Lease,
  expected: string | null,
  onCommit?: (commit: string) => void,
): Promise<string | null> {
  const commit = (
    await remote.git.raw([...IDENTITY, "commit-tree", remote.tree, "-m", JSON.stringify(lease)])
  ).trim();
  onCommit?.(commit);
  const ref = leaseRef(branch);
  try {
    await remote.net([
      "push",
      "--quiet",
      `--force-with-lease=${ref}:${expected ?? ""}`,
      remote.source,
      `${commit}:${ref}`,
    ]);
    return commit;
  } catch (error) {
    // The compare-and-swap lost: someone else changed the lease first.
    if (LOST_RACE.test((error as Error).message)) return null;
    throw gitFailure(
      error,
      "status-branch-push-failed",
      `could not write the lease of status branch ${branch}`,
    );
  }
}

export type BranchLease = {
  release(): Promise<void>;
  lost: AbortSignal;
  /** Throws lock-lost unless the lease is still good on this process's monotonic clock. */
  assertHeld(): void;
  /** A status push that renews the lease in the same atomic push (status/fenced-push.ts). */
  withLease: NonNullable<PushFence["withLease"]>;
  /** The scratch repository the lease is written from (kept small: scratch-prune.ts). */
  scratch: string;
};

type LeaseOptions = {
  leaseMs: number;
  renewMs: number;
  timeoutMs: number;
  retryMs: number;
  clock?: Clock;
  monotonic?: Monotonic;
  signal?: AbortSignal;
  /** Unreferenced objects of the scratch repository older than this are pruned (default: 2 leases, at least 10 min)… */
  pruneAfterMs?: number;
  /** …every this many renewals or looks (default 100). */
  pruneEvery?: number;
};

/**
 * ", writing its store REL/.plumb/status on it (…)" when the lease names the holder's store: one
 * lease covers every store of the branch, so a writer of another directory learns why it waits.
 * Read from the remote: control characters escaped.
 */
function storeHeld(lease: Lease | null | undefined): string {
  if (typeof lease?.store !== "string") return "";
  return `, writing its store ${escapeControls(lease.store)} (one lease for every store on the branch)`;
}

/** Free to take: none, ours, its local process gone, or the same commit seen for its whole lease. */
const takeable = (
  seen: Seen,
  holder: LockHolder,
  expired: (token: string, ms: number) => boolean,
  leaseMs: number,
) =>
  !seen ||
  seen.lease?.holder.id === holder.id ||
  (seen.lease !== null && isDeadLocalHolder(seen.lease.holder)) ||
  expired(seen.sha, seen.lease?.lease_ms ?? leaseMs);

export async function acquireBranchLease(
  target: LeaseTarget,
  holder: LockHolder,
  options: LeaseOptions,
): Promise<BranchLease> {
  const clock = options.clock ?? systemClock;
  const monotonic = options.monotonic ?? systemMonotonic;
  const remote = await openRemote(target);
  const deadline = clock.now() + options.timeoutMs;
  let renewals = 0;
  const next = (): Lease => ({
    holder,
    store: remote.store,
    lease_ms: options.leaseMs,
    renewals: renewals++,
    expires_at: new Date(clock.now() + options.leaseMs).toISOString(),
  });
  const observer = createObserver(monotonic);
  const olderThanMs = options.pruneAfterMs ?? Math.max(600_000, 2 * options.leaseMs);
  const prune = scratchPrune(remote.git, olderThanMs, options.pruneEvery);
  try {
    for (;;) {
      const seen = await readLease(remote, target.branch);
      await prune();
      const startedAt = monotonic();
      if (takeable(seen, holder, observer.expired, options.leaseMs)) {
        const current = await writeLease(remote, target.branch, next(), seen?.sha ?? null);
        if (current)
          return startRenewing(remote, target.branch, current, next, { ...options, startedAt }, prune);
      }
      if (options.signal?.aborted) throw options.signal.reason;
      if (clock.now() >= deadline) {
        const other = seen?.lease?.holder;
        throw new PlumbError(
          "state-locked",
          `the status branch ${target.branch} is leased by ${other ? describeHolder(other) : "another plumb process"}${storeHeld(seen?.lease)}; wait, pass --lock-timeout, or if that process is gone run: plumb unlock --force --status-branch ${target.branch}`,
        );
      }
      await clock.sleep(Math.min(options.retryMs, Math.max(1, deadline - clock.now())), options.signal);
    }
  } catch (error) {
    await remote.close();
    throw error;
  }
}

function startRenewing(
  remote: Remote,
  branch: string,
  first: string,
  next: () => Lease,
  options: LeaseOptions & { startedAt: number },
  prune: () => Promise<void>,
): BranchLease {
  const monotonic = options.monotonic ?? systemMonotonic;
  const lost = new AbortController();
  const lose = (error: PlumbError) => lost.abort(error); // (once aborted, abort() keeps the first reason)
  const fence: Fence = createFence({
    leaseMs: options.leaseMs,
    monotonic,
    since: options.startedAt,
    what: `the lease of status branch ${branch}`,
    onLapse: lose,
  });
  const r: Renewal = {
    remote,
    branch,
    next,
    options,
    monotonic,
    lost,
    fence,
    current: first,
    renewing: Promise.resolve(),
    inFlight: null,
    timer: undefined,
    released: false,
    prune,
  };
  // A renewMs past the renew deadline loses the lease between renewals (tests: a holder that is gone).
  r.timer = setInterval(() => {
    r.renewing = r.renewing.then(() => renew(r)).catch(() => undefined);
  }, options.renewMs);
  r.timer.unref();
  return {
    lost: lost.signal,
    assertHeld: () => assertHeld(r),
    withLease: (push) => withLease(r, push),
    release: () => release(r),
    scratch: remote.scratch,
  };
}

/** What a held lease's renewals, writes and release share. */
type Renewal = {
  remote: Remote;
  branch: string;
  next: () => Lease;
  options: LeaseOptions & { startedAt: number };
  monotonic: Monotonic;
  lost: AbortController;
  fence: Fence;
  current: string;
  renewing: Promise<void>;
  /** The async renewal's push. */
  inFlight: { commit: string; started: number } | null;
  timer: ReturnType<typeof setInterval> | undefined;
  released: boolean;
  /** After each renewal that landed (scratch-prune.ts). */
  prune: () => Promise<void>;
};

function lose(r: Renewal, error: PlumbError): void {
  r.lost.abort(error); // (once aborted, abort() keeps the first reason)
}

async function renew(r: Renewal): Promise<void> {
  if (r.lost.signal.aborted) return;
  // Even late: a compare-and-swap that lands proves no one took it meanwhile (fence.ts).
  const from = r.current;
  const started = r.monotonic();
  let landed: string | null = null;
  try {
    landed = await writeLease(r.remote, r.branch, r.next(), from, (commit) => {
      r.inFlight = { commit, started };
    });
    if (landed) {
      // (A renewal on the spot meanwhile found this one landed: current is `landed` already.)
      r.current = landed;
      r.fence.renewed(started);
    } else if (r.current === from)
      // (current moved: a renewal on the spot, below, swapped it first)
      lose(
        r,
        new PlumbError("lock-lost", `lost the lease of status branch ${r.branch}: another writer took it`),
      );
  } catch {
    // The remote did not answer: try again at the next tick; past the renew deadline it is lost.
    if (!r.fence.valid())
      lose(r, lapsedError(`the lease of status branch ${r.branch}`, renewDeadlineOf(r.options.leaseMs)));
  } finally {
    r.inFlight = null;
  }
  if (landed) await r.prune();
}

// Past the renew deadline at a write while the lease itself has not run out on this process's
// monotonic clock (its event loop was blocked, no renewal ran): one compare-and-swap push on the
// spot, synchronous so that nothing is sent before it answers. It landing proves the lease is
// still this holder's; failing (someone else moved the ref) leaves the deadline passed, and the
// write is refused as before. A renewal in flight that landed first counts as this one.
function renewNow(r: Renewal): void {
  const from = r.current;
  const left = r.options.leaseMs - r.fence.sinceRenewal();
  // Stryker disable next-line EqualityOperator: equivalent, with 0 ms left its git call times out at once (1 ms)
  if (left <= 0) return;
  const started = r.monotonic();
  const ref = leaseRef(r.branch);
  try {
    const message = JSON.stringify(r.next());
    const commit = r.remote.gitSync([...IDENTITY, "commit-tree", r.remote.tree, "-m", message], left);
    r.remote.gitSync(
      ["push", "--quiet", `--force-with-lease=${ref}:${from}`, r.remote.source, `${commit}:${ref}`],
      r.options.leaseMs - r.fence.sinceRenewal(),
    );
    r.current = commit;
    r.fence.renewed(started);
  } catch {
    const pending: { commit: string; started: number } | null = r.inFlight;
    if (!pending) return;
    try {
      const now = r.remote.gitSync(
        ["ls-remote", r.remote.source, ref],
        r.options.leaseMs - r.fence.sinceRenewal(),
      );
      if (now.split(/\s+/)[0] === pending.commit) {
        r.current = pending.commit;
        r.fence.renewed(pending.started);
      }
    } catch {
      // No answer: the deadline stays passed.
    }
  }
}

function assertHeld(r: Renewal): void {
  if (r.lost.signal.aborted) throw r.lost.signal.reason;
  if (!r.fence.valid()) renewNow(r);
  r.fence.check();
}

// A push carrying the next lease, in turn with the renewals: the lease moves only if it lands.
function withLease(
  r: Renewal,
  push: Parameters<BranchLease["withLease"]>[0],
): ReturnType<BranchLease["withLease"]> {
  const run = r.renewing.then(async () => {
    assertHeld(r);
    const started = r.monotonic();
    const next_ = await push({
      ref: leaseRef(r.branch),
      expected: r.current,
      message: JSON.stringify(r.next()),
    });
    if (next_) {
      r.current = next_;
      r.fence.renewed(started);
      return;
    }
    lose(
      r,
      new PlumbError("lock-lost", `lost the lease of status branch ${r.branch}: another writer took it`),
    );
    throw r.lost.signal.reason;
  });
  r.renewing = run.catch(() => undefined);
  return run;
}

async function release(r: Renewal): Promise<void> {
  // Stryker disable next-line ConditionalExpression: equivalent, a second release's CAS finds no lease of its own
  if (r.released) return;
  // Stryker disable next-line BooleanLiteral: equivalent, as above
  r.released = true;
  clearInterval(r.timer);
  await r.renewing;
  const ref = leaseRef(r.branch);
  await r.remote
    .net(["push", "--quiet", `--force-with-lease=${ref}:${r.current}`, r.remote.source, `:${ref}`])
    .catch(() => undefined);
  await r.remote.close();
}

/** The lease holder (even if expired), or null. */
export async function readBranchLease(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    return (await readLease(remote, target.branch))?.lease?.holder ?? null;
  } finally {
    await remote.close();
  }
}

/** Deletes the lease whoever holds it; returns who held it. */
export async function forceBranchUnlock(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    const seen = await readLease(remote, target.branch);
    // Stryker disable next-line ConditionalExpression: equivalent, git deletes a missing ref without error (one push saved)
    if (seen) await remote.net(["push", "--quiet", "--force", remote.source, `:${leaseRef(target.branch)}`]);
    return seen?.lease?.holder ?? null;
  } finally {
    await remote.close();
  }
}
