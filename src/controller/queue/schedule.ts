// The controller's work schedule as a pure state machine: no timers, no I/O. Time comes in as `now`.
// The driver (work-queue.ts) asks `take(now)` for what may start and `nextWakeAt()` for when to look again.

import { backoffDelay } from "../../clock.js";

/** Why an object is reconciled: its manifest changed (apply it), or a periodic drift check. */
export type WorkReason = "change" | "drift";

export type WorkItem = {
  key: string;
  reason: WorkReason;
  /** 0 for a first try; n for the n-th retry after failures. */
  attempt: number;
};

export type ScheduleOptions = {
  /** Most reconciles running at once, over all objects. */
  concurrency: number;
  /** A change waits this long for more saves; every new save restarts the wait (one reconcile per burst). */
  debounceMs: number;
  /**
   * Retry after a failure: full jitter under a ceiling of backoffBaseMs, doubled per consecutive
   * failure up to backoffMaxMs, so objects that failed together do not retry together.
   */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Uniform in [0, 1) (default Math.random): injected so tests can pin the jitter. */
  random?: () => number;
};

type Pending = { item: WorkItem; readyAt: number; seq: number };
type KeyState = { pending?: Pending; running: boolean; failures: number; blockedUntil: number };

export class WorkSchedule {
  private readonly keys = new Map<string, KeyState>();
  private seq = 0;
  private runningCount = 0;

  constructor(private readonly options: ScheduleOptions) {
    if (options.concurrency < 1) throw new RangeError("concurrency must be at least 1");
  }

  /** Asks for `key` to be reconciled. Repeated requests coalesce; a change outranks a drift check. */
  enqueue(key: string, reason: WorkReason, now: number): void {
    const state = this.state(key);
    if (reason === "change") {
      // New content deserves an immediate try: forget earlier failures of older content.
      state.failures = 0;
      state.blockedUntil = 0;
      state.pending = {
        item: { key, reason, attempt: 0 },
        readyAt: now + this.options.debounceMs,
        seq: this.seq++,
      };
      return;
    }
    if (state.pending) return; // a queued change or drift check already covers it
    state.pending = { item: { key, reason, attempt: 0 }, readyAt: now, seq: this.seq++ };
  }

  /** Forgets pending work for a key (e.g. its manifest was removed); a running reconcile is not affected. */
  cancel(key: string): void {
    const state = this.keys.get(key);
    if (state) delete state.pending;
  }

  /** Items that may start now, best first, marked running. At most one per key, `concurrency` in all. */
  take(now: number): WorkItem[] {
    const free = this.options.concurrency - this.runningCount;
    // Called after every completion: with 10,000 objects queued, scanning and sorting all of them
    // each time to start one was quadratic (seconds of the controller's first scan). No free slot:
    // nothing to scan. Otherwise keep only the best `free` while scanning (free ≤ concurrency).
    if (free <= 0) return [];
    const best: Pending[] = [];
    const before = (a: Pending, b: Pending) =>
      this.rank(a.item) - this.rank(b.item) || a.readyAt - b.readyAt || a.seq - b.seq;
    for (const state of this.keys.values()) {
      if (state.running || !state.pending || this.readyAt(state) > now) continue;
      const pending = state.pending;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, the skip only saves the insertion below, and before() is never 0 (seq is unique)
      if (best.length === free && before(pending, best[free - 1]!) >= 0) continue;
      let at = best.length;
      // Stryker disable next-line EqualityOperator: equivalent, before() is never 0 (seq is unique)
      while (at > 0 && before(pending, best[at - 1]!) < 0) at--;
      best.splice(at, 0, pending);
      if (best.length > free) best.pop();
    }
    for (const pending of best) {
      const state = this.state(pending.item.key);
      delete state.pending;
      state.running = true;
      this.runningCount++;
    }
    return best.map((pending) => pending.item);
  }

  /** Records the end of a reconcile. A failure schedules a retry with exponential backoff. */
  complete(item: WorkItem, ok: boolean, now: number): void {
    const state = this.state(item.key);
    if (!state.running) return;
    state.running = false;
    this.runningCount--;
    if (ok) {
      state.failures = 0;
      state.blockedUntil = 0;
    } else {
      state.failures++;
      state.blockedUntil = now + this.backoffMs(state.failures);
      // A change queued while this ran supersedes the retry; otherwise retry the same work.
      if (!state.pending) {
        state.pending = {
          item: { key: item.key, reason: item.reason, attempt: item.attempt + 1 },
          readyAt: state.blockedUntil,
          seq: this.seq++,
        };
      }
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent through the API, a failure always leaves a retry pending, and a key kept with nothing pending and no failures reads as one forgotten (only its memory differs)
    if (!state.pending && state.failures === 0) this.keys.delete(item.key);
  }

  /** Delay before the next try after `failures` consecutive failures. */
  backoffMs(failures: number): number {
    const { backoffBaseMs, backoffMaxMs, random = Math.random } = this.options;
    return backoffDelay(failures, { baseMs: backoffBaseMs, maxMs: backoffMaxMs }, random);
  }

  /** Earliest time a pending, not running item becomes ready; undefined when nothing waits. */
  nextWakeAt(): number | undefined {
    let next: number | undefined;
    for (const state of this.keys.values()) {
      if (state.running || !state.pending) continue;
      const at = this.readyAt(state);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  stats(): { pending: number; running: number; backingOff: number } {
    let pending = 0;
    let backingOff = 0;
    for (const state of this.keys.values()) {
      if (state.pending) pending++;
      if (state.failures > 0) backingOff++;
    }
    return { pending, running: this.runningCount, backingOff };
  }

  /** Consecutive failures of a key (0 when healthy). */
  failures(key: string): number {
    return this.keys.get(key)?.failures ?? 0;
  }

  private readyAt(state: KeyState): number {
    const pending = state.pending!;
    // A fresh change ignores backoff (enqueue cleared it); drift checks and retries wait it out.
    return pending.item.reason === "change" && pending.item.attempt === 0
      ? pending.readyAt
      : Math.max(pending.readyAt, state.blockedUntil);
  }

  private rank(item: WorkItem): number {
    if (item.reason === "change") return item.attempt === 0 ? 0 : 1;
    return 2;
  }

  private state(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { running: false, failures: 0, blockedUntil: 0 };
      this.keys.set(key, state);
    }
    return state;
  }
}
