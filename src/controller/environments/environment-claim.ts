import {
  acquireStateLock,
  describeHolder,
  readStateLock,
  type LockTarget,
  type StateLock,
} from "../../lock/index.js";
import type { Logger } from "../../logger.js";
import { errorMessage } from "../error-message.js";
import type { Store } from "../store.js";

// One environment on one replica: wait for its state lock while this replica may take another
// environment (rebalance.ts says so), lead it (its own store: status, clients, queue), and go back
// to waiting when the lock is lost (another replica took it) or when this replica hands it over
// because it leads more than its share. A failure here (its api_key variable is not set, its store
// cannot be opened) is this environment's alone: it is retried, and meanwhile another replica may take it.

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
  /** Ends the claim: the store stops within graceMs and the lock is released. */
  stop(graceMs: number): Promise<void>;
};

export type ClaimDeps = {
  name: string;
  target: LockTarget;
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

export function startClaim(deps: ClaimDeps): EnvironmentClaim {
  const { log } = deps;
  const stopping = new AbortController();
  let role: EnvironmentRole = "standby";
  let leader: string | undefined;
  let error: string | undefined;
  let store: Store | undefined;
  let since = 0;
  let waiting: AbortController | undefined;
  let napping: (() => void) | undefined;
  let handingOver: (() => void) | undefined;

  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        stopping.signal.removeEventListener("abort", done); // a standby naps all day: no listener piles up
        napping = undefined;
        resolve();
      }
      napping = done;
      stopping.signal.addEventListener("abort", done, { once: true });
    });

  const fail = (reason: unknown, what: string) => {
    role = "failed";
    error = errorMessage(reason);
    log.error({ err: error }, what);
  };

  async function lead(lock: StateLock): Promise<void> {
    role = "starting";
    try {
      store = await deps.start(lock);
    } catch (reason) {
      fail(reason, "environment not started: retrying");
      return nap(deps.retryMs);
    }
    role = "leader";
    error = undefined;
    since = performance.now();
    deps.changed();
    const lost = new Promise<"lost">((resolve) =>
      lock.lost.aborted
        ? resolve("lost")
        : lock.lost.addEventListener("abort", () => resolve("lost"), { once: true }),
    );
    const handOver = new Promise<"hand-over">((resolve) => (handingOver = () => resolve("hand-over")));
    let onStop = () => undefined as void;
    const ended = new Promise<"stop">((resolve) => {
      onStop = () => resolve("stop");
      if (stopping.signal.aborted)
        onStop(); // stopped while it was starting
      else stopping.signal.addEventListener("abort", onStop, { once: true });
    });
    const why = await Promise.race([lost, handOver, ended]);
    stopping.signal.removeEventListener("abort", onStop);
    handingOver = undefined;
    if (why === "stop") return; // stop() stops the store
    const leading = store;
    if (why === "lost") log.error({}, "lost this environment's state lock: standing by");
    else log.info({}, "handing this environment over: this replica leads more than its share");
    await leading.stop(why === "lost" ? 0 : deps.graceMs);
    store = undefined;
    role = "standby";
    deps.changed();
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        deps.check();
      } catch (reason) {
        fail(reason, "environment cannot run: retrying");
        await nap(deps.retryMs);
        continue;
      }
      if (role === "failed") role = "standby";
      if (!deps.mayTake()) {
        await nap(deps.retryMs);
        continue;
      }
      const wait = (waiting = new AbortController());
      void readStateLock(deps.target)
        .then((holder) => (leader = holder ? describeHolder(holder) : undefined))
        .catch(() => undefined);
      let lock: StateLock;
      try {
        lock = await acquireStateLock(deps.target, {
          command: "plumb controller",
          timeoutMs: Number.POSITIVE_INFINITY,
          signal: AbortSignal.any([wait.signal, stopping.signal]),
          ...(deps.leaseMs ? { leaseMs: deps.leaseMs } : {}),
        });
      } catch (reason) {
        if (wait.signal.aborted || stopping.signal.aborted) continue;
        fail(reason, "cannot take this environment's state lock: retrying");
        await nap(deps.retryMs);
        continue;
      } finally {
        waiting = undefined;
      }
      leader = undefined;
      if (stopping.signal.aborted || !deps.mayTake()) {
        await lock.release(); // another environment took the last place meanwhile
        continue;
      }
      log.info({}, "took this environment's state lock: leading");
      await lead(lock);
    }
  }

  const running = loop().catch((reason: unknown) => fail(reason, "environment claim failed"));
  return {
    name: deps.name,
    role: () => role,
    leader: () => leader,
    error: () => error,
    store: () => store,
    since: () => since,
    wake: () => napping?.(),
    stopWaiting: () => waiting?.abort(),
    handOver: () => handingOver?.(),
    async stop(graceMs) {
      stopping.abort();
      waiting?.abort();
      await running;
      const leading = store;
      store = undefined;
      await leading?.stop(graceMs);
    },
  };
}
