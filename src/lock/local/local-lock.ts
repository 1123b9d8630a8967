import { realStoreDir } from "./real-store.js";
import { systemClock } from "../../clock.js";
import { fileError, PlumbError } from "../../errors.js";
import { committedLock, UNTRACK_LOCK } from "../committed-lock.js";
import { createFence, lapsedError, renewDeadlineOf } from "../fence.js";
import { isDeadLocalHolder, newHolder } from "../holder.js";
import {
  fileSystemNow,
  legacyLockedError,
  legacyStale,
  legacyStaleMs,
  removeLegacyMarker,
  removeStaleMarkerTemps,
  writeLegacyMarker,
} from "./legacy-lock.js";
import {
  createLockDir,
  type DirLease,
  legacyHolderPath,
  readLockDir,
  releaseLockDir,
  renewLockDir,
  renewLockDirSync,
  takeOverLockDir,
} from "./lock-dir.js";
import {
  DEFAULT_LEASE_MS,
  type LockHolder,
  type LockOptions,
  type LockTarget,
  type StateLock,
  systemMonotonic,
} from "../lock-types.js";
import { lockIoError, stateLockedError } from "../lock-errors.js";
import { createObserver } from "../observer.js";
import { removeStaleTemps } from "../../status/write/stale-temps.js";

// The lock of a local status directory (`<statusDir>.lock`, lock-dir.ts). The holder renews it every
// renewMs; a waiter takes it over once it has seen the same renewal for the holder's whole lease on
// its own monotonic clock (observer.ts: no clock is compared, so a process whose clock runs ahead
// cannot take a live lock), or at once when the holder is a process of this host that is gone
// (kill -9). It lives beside the status directory, never in it: the store and the status branch
// carry only `*.json` records.

const MIN_LEASE_MS = 1_000;

/** `<statusDir>.lock` beside the store's real path (real-store.ts): one lock whatever link names it. */
export const lockPathOf = (target: LockTarget): string => `${realStoreDir(target.statusDir)}.lock`;

/**
 * May a waiter remove this lock now? Released, its local process gone, or seen unrenewed for a lease;
 * an older plumb's lock by proper-lockfile's rule (legacy-lock.ts).
 */
const stale = (
  seen: DirLease,
  expired: (token: string, leaseMs: number) => boolean,
  leaseMs: number,
  now: number,
) =>
  seen.legacy
    ? legacyStale(seen, now, legacyStaleMs(leaseMs))
    : seen.released ||
      (seen.holder !== null && isDeadLocalHolder(seen.holder)) ||
      expired(seen.token, seen.holder?.lease_ms ?? leaseMs);

export async function acquireLocalLock(target: LockTarget, options: LockOptions): Promise<StateLock> {
  const clock = options.clock ?? systemClock;
  const monotonic = options.monotonic ?? systemMonotonic;
  const leaseMs = Math.max(MIN_LEASE_MS, options.leaseMs ?? DEFAULT_LEASE_MS);
  const lockPath = lockPathOf(target);
  const deadline = clock.now() + (options.timeoutMs ?? 0);
  const observer = createObserver(monotonic);
  // Stryker disable next-line StringLiteral: equivalent, no lock's token is any fixed string (beat-, claim-, legacy-, no-beat): the first look asks git whatever it starts as
  let looked = ""; // the lock last asked of git (committed-lock.ts): once per renewal seen
  for (;;) {
    const holder = newHolder(options.command, clock.now());
    const startedAt = monotonic();
    let seen: DirLease | null;
    try {
      if (await createLockDir(lockPath, holder, leaseMs)) {
        const held = holdLocalLock(lockPath, holder, { ...options, leaseMs }, startedAt);
        // For an older plumb on this store: its lock's holder record, naming this holder.
        await writeLegacyMarker(lockPath, holder).catch(async (error: unknown) => {
          await held.release();
          // Named as itself: a directory there was reported as the lock path "is a directory".
          const marker = legacyHolderPath(lockPath);
          const full = ["ENOSPC", "EDQUOT"].includes((error as NodeJS.ErrnoException).code ?? "");
          const fix = full ? "free space on that disk" : "move away what is there";
          throw fileError(
            "lock-io-error",
            marker,
            error,
            `plumb writes this holder record (for an older plumb) beside its lock ${lockPath}: ${fix}, or pass --status-dir to another directory`,
          );
        });
        // The lock's holder is the one writer: what killed writers left goes now (stale-temps.ts).
        await removeStaleTemps(target.statusDir);
        await removeStaleMarkerTemps(lockPath);
        return held;
      }
      seen = await readLockDir(lockPath);
      // An older plumb's lock is judged by its mtime: on the earlier of this clock and the disk's.
      const now = seen?.legacy
        ? Math.min(clock.now(), (await fileSystemNow(lockPath)) ?? Infinity)
        : clock.now();
      if (seen && stale(seen, observer.expired, leaseMs, now)) {
        await takeOverLockDir(lockPath, seen.token);
        continue;
      }
      const committed = seen && seen.token !== looked ? await committedLock(lockPath) : undefined;
      // Stryker disable next-line LogicalOperator: equivalent, `&&` keeps looked at "" so git is asked at every look: the same answer, only more git runs
      looked = seen?.token ?? looked;
      if (seen && committed) {
        options.say?.(`${committed}: this run takes the lock in its place; ${UNTRACK_LOCK}`);
        await takeOverLockDir(lockPath, seen.token);
        continue;
      }
    } catch (error) {
      throw lockIoError(error, lockPath, target.statusDir);
    }
    if (!seen) continue; // released between the two looks: try again at once
    if (options.signal?.aborted) throw options.signal.reason;
    if (clock.now() >= deadline)
      throw seen.legacy
        ? legacyLockedError(seen, lockPath, target.statusDir, clock.now())
        : stateLockedError(seen, target.statusDir, leaseMs);
    await clock.sleep(
      Math.min(options.retryMs ?? 1_000, Math.max(1, deadline - clock.now())),
      options.signal,
    );
  }
}

function holdLocalLock(
  lockPath: string,
  holder: LockHolder,
  options: LockOptions & { leaseMs: number },
  startedAt: number,
): StateLock {
  const monotonic = options.monotonic ?? systemMonotonic;
  // At least every third of the lease, whatever renewMs says; at most every 10 ms.
  const third = options.leaseMs / 3;
  const renewMs = Math.max(10, Math.min(options.renewMs ?? third, third));
  const lost = new AbortController();
  // (Once aborted, abort() keeps the first reason.)
  const lose = (error: PlumbError) => lost.abort(error);
  const fence = createFence({
    leaseMs: options.leaseMs,
    monotonic,
    since: startedAt,
    what: `the state lock ${lockPath}`,
    onLapse: lose,
  });
  let n = 0;
  let renewing: Promise<void> = Promise.resolve();
  let inFlight: number | null = null; // when the async renewal in flight began
  const renew = async () => {
    if (lost.signal.aborted) return;
    // Even late (the event loop was blocked, the process stopped): a renewal that lands proves no
    // one took it meanwhile (a takeover removes this beat); writes wait for it through the fence.
    const from = n;
    const started = monotonic();
    inFlight = started;
    try {
      if (await renewLockDir(lockPath, holder.id, from)) {
        n = from + 1;
        fence.renewed(started);
      } else if (n === from)
        // (n moved: a renewal on the spot, below, renamed this beat first)
        lose(
          new PlumbError(
            "lock-lost",
            `lost the state lock ${lockPath}: another process took it (plumb unlock --force, or a takeover while this one did not renew)`,
          ),
        );
    } catch {
      // The disk did not answer: try again at the next tick; past the renew deadline it is lost.
      if (!fence.valid()) lose(lapsedError(`the state lock ${lockPath}`, renewDeadlineOf(options.leaseMs)));
    } finally {
      inFlight = null;
    }
  };
  // Past the deadline at a write (its event loop was blocked, no renewal ran): a rename on the spot
  // proves the lock is still its own right now, as the timer's renewal would have. A lock taken
  // meanwhile has no beat of this holder's: the write is refused and the lock counts as lost.
  const renewNow = () => {
    const from = n;
    const started = inFlight ?? monotonic();
    if (renewLockDirSync(lockPath, holder.id, from)) {
      n = from + 1;
      fence.renewed(started);
    }
  };
  const timer = setInterval(() => {
    renewing = renewing.then(renew).catch(() => undefined);
  }, renewMs);
  timer.unref();
  let released = false;
  const assertHeld = () => {
    if (lost.signal.aborted) throw lost.signal.reason;
    if (!fence.valid()) renewNow();
    fence.check();
  };
  return {
    holder,
    lost: lost.signal,
    assertHeld,
    pushFence: { check: assertHeld },
    async release() {
      // Stryker disable next-line ConditionalExpression: equivalent, a second release finds no beat of its own nor its record
      if (released) return;
      // Stryker disable next-line BooleanLiteral: equivalent, as above
      released = true;
      clearInterval(timer);
      await renewing;
      // Only its own lock: one taken over meanwhile is the next holder's and stays.
      await releaseLockDir(lockPath, holder.id, n).catch(() => undefined);
      await removeLegacyMarker(lockPath, holder.id).catch(() => undefined);
    },
  };
}
