import { describeHolder, readStateLock, type LockTarget, type StateLock } from "../../lock/index.js";
import { acquireStateLocks } from "../../lock/locks-in-order.js";
import type { Logger } from "../../logger.js";
import { errorMessage } from "../error-message.js";
import type { Store } from "../store.js";

// One environment on one replica: wait for its state lock while this replica may take another
// environment (rebalance.ts says so), lead it (its own store: status, clients, queue), and go back
// to waiting when the lock is lost (another replica took it) or when this replica hands it over
// because it leads more than its share. A failure here (its api_key variable is not set, its store
// cannot be opened) is this environment's alone: it is retried, and meanwhile another replica may take it.
// restart() (its Environment's API settings changed in git) drains the store and starts it again.

export type EnvironmentRole = "starting" | "standby" | "leader" | "failed";

export type EnvironmentClaim = {
  name: string;
  role(): EnvironmentRole;
  /** Who holds its lock while this replica stands by; why it failed. */
  leader(): string | undefined;
  error(): string | undefined;
  store(): Store | undefined;
  /** When it started leading here (the newest is handed over first). */
  since(): number;
  /** Look again now (this replica may take one more). */
  wake(): void;
  /** Stop waiting for the lock (this replica leads its share). */
  stopWaiting(): void;
  /** Stop leading it gracefully, releasing the lock, and stand by. */
  handOver(): void;
  /** Drain its store and start it again (new API settings), taking the lock again. */
  restart(): void;
  /** Ends the claim: the store stops within graceMs and the lock is released. */
  stop(graceMs: number): Promise<void>;
};

export type ClaimDeps = {
  name: string;
  target: LockTarget;
  /** The stores nearby in use (their ENV/) whose locks are held with its own (leadership.ts). */
  nearby?: (() => Promise<string[]>) | undefined;
  leaseMs: number | undefined;
  /** Whether this replica may take one more environment now. */
  mayTake: () => boolean;
  /** Throws when the environment cannot run here (its API settings): checked before the lock. */
  check: () => void;
  start: (lock: StateLock) => Promise<Store>;
  /** It started leading or stopped: the replica looks at its share again. */
  changed: () => void;
  retryMs: number;
  graceMs: number;
  log: Logger;
};

type Ending = "lost" | "hand-over" | "restart" | "stop";

/** The claim's mutable state, shared by its loop, its leading and its methods. */
type ClaimState = {
  role: EnvironmentRole;
  leader: string | undefined;
  error: string | undefined;
  store: Store | undefined;
  since: number;
  waiting: AbortController | undefined;
  napping: (() => void) | undefined;
  ending: ((why: Ending) => void) | undefined;
  /** restart() while the store was starting: restarted once it has started. */
  restartAsked: boolean;
  stopping: AbortController;
};

export function startClaim(deps: ClaimDeps): EnvironmentClaim {
  const state: ClaimState = {
    ...{ role: "standby", leader: undefined, error: undefined, store: undefined, since: 0 },
    ...{ waiting: undefined, napping: undefined, ending: undefined, restartAsked: false },
    stopping: new AbortController(),
  };
  const running = loop(deps, state).catch((reason: unknown) =>
    fail(deps, state, reason, "environment claim failed"),
  );
  return {
    name: deps.name,
    role: () => state.role,
    leader: () => state.leader,
    error: () => state.error,
    store: () => state.store,
    since: () => state.since,
    wake: () => state.napping?.(),
    stopWaiting: () => state.waiting?.abort(),
    handOver: () => state.ending?.("hand-over"),
    restart() {
      if (state.role === "starting") state.restartAsked = true;
      else if (state.ending) state.ending("restart");
      else state.napping?.(); // failed or waiting: the next look reads the new settings
    },
    async stop(graceMs) {
      state.stopping.abort();
      state.waiting?.abort();
      await running;
      const leading = state.store;
      state.store = undefined;
      await leading?.stop(graceMs);
    },
  };
}

function fail(deps: ClaimDeps, state: ClaimState, reason: unknown, what: string): void {
  state.role = "failed";
  state.error = errorMessage(reason);
  deps.log.error({ err: state.error }, what);
}

/** Sleeps ms, or less when stopped or woken; a standby naps all day: no listener piles up. */
function nap(state: ClaimState, ms: number): Promise<void> {
  const { signal } = state.stopping;
  if (signal.aborted) return Promise.resolve(); // stopped before the nap: no abort event to come
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      state.napping = undefined;
      resolve();
    }
    state.napping = done;
    signal.addEventListener("abort", done, { once: true });
  });
}

async function loop(deps: ClaimDeps, state: ClaimState): Promise<void> {
  const { signal } = state.stopping;
  while (!signal.aborted) {
    try {
      deps.check();
    } catch (reason) {
      fail(deps, state, reason, "environment cannot run: retrying");
      await nap(state, deps.retryMs);
      continue;
    }
    if (state.role === "failed") state.role = "standby";
    if (!deps.mayTake()) {
      await nap(state, deps.retryMs);
      continue;
    }
    const lock = await takeLock(deps, state);
    if (!lock) continue;
    state.leader = undefined;
    if (signal.aborted || !deps.mayTake()) {
      await lock.release(); // another environment took the last place meanwhile
      continue;
    }
    deps.log.info({}, "took this environment's state lock: leading");
    await lead(deps, state, lock);
  }
}

/** Waits for the lock; undefined when the wait was called off or failed (after a nap). */
async function takeLock(deps: ClaimDeps, state: ClaimState): Promise<StateLock | undefined> {
  const { signal } = state.stopping;
  const wait = (state.waiting = new AbortController());
  void readStateLock(deps.target)
    .then((holder) => (state.leader = holder ? describeHolder(holder) : undefined))
    .catch(() => undefined);
  try {
    return await acquireStateLocks(deps.target, deps.nearby ?? (async () => []), {
      command: "plumb controller",
      say: (line: string) => deps.log.warn({}, line),
      timeoutMs: Number.POSITIVE_INFINITY,
      signal: AbortSignal.any([wait.signal, signal]),
      ...(deps.leaseMs ? { leaseMs: deps.leaseMs } : {}),
    });
  } catch (reason) {
    if (wait.signal.aborted || signal.aborted) return undefined;
    fail(deps, state, reason, "cannot take this environment's state lock: retrying");
    await nap(state, deps.retryMs);
    return undefined;
  } finally {
    state.waiting = undefined;
  }
}

async function lead(deps: ClaimDeps, state: ClaimState, lock: StateLock): Promise<void> {
  state.role = "starting";
  try {
    state.store = await deps.start(lock);
  } catch (reason) {
    state.restartAsked = false; // the next start reads the settings afresh
    fail(deps, state, reason, "environment not started: retrying");
    // Given back: kept (and renewed), no replica could lead it again, this one included.
    await lock.release().catch(() => undefined);
    return nap(state, deps.retryMs);
  }
  state.role = "leader";
  state.error = undefined;
  state.since = performance.now();
  deps.changed();
  const why = await leadingEnds(state, lock);
  if (why === "stop") return; // stop() stops the store
  const leading = state.store;
  if (why === "lost") deps.log.error({}, "lost this environment's state lock: standing by");
  else if (why === "restart")
    deps.log.info({}, "this environment's API settings changed: draining its store and starting it again");
  else deps.log.info({}, "handing this environment over: this replica leads more than its share");
  await leading.stop(why === "lost" ? 0 : deps.graceMs);
  state.store = undefined;
  state.role = "standby";
  // A restart takes the lock again at once: the place it held is not offered to another environment.
  if (why !== "restart") deps.changed();
}

/** Resolves with why leading ends: the lock lost, a hand-over, a restart or the claim stopped. */
async function leadingEnds(state: ClaimState, lock: StateLock): Promise<Ending> {
  const { signal } = state.stopping;
  let end = (_why: Ending) => undefined as void;
  const ended = new Promise<Ending>((resolve) => (end = resolve));
  const onLost = () => end("lost");
  const onStop = () => end("stop");
  state.ending = (why) => end(why);
  if (lock.lost.aborted) onLost();
  else lock.lost.addEventListener("abort", onLost, { once: true });
  if (signal.aborted)
    onStop(); // stopped while it was starting
  else signal.addEventListener("abort", onStop, { once: true });
  if (state.restartAsked) end("restart");
  state.restartAsked = false;
  const why = await ended;
  signal.removeEventListener("abort", onStop);
  lock.lost.removeEventListener("abort", onLost);
  state.ending = undefined;
  return why;
}
