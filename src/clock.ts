/** Injected time, so tests stay fast and deterministic. */
export type Clock = {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds (or immediately on a test clock); rejects with the signal's reason if aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
};

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason as Error);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/**
 * How retries back off: the first retry's ceiling, multiplied by `factor` (default 2) at each later
 * one, never above `maxMs`.
 */
export type Backoff = { baseMs: number; maxMs: number; factor?: number };

/** The ceiling of the wait before retry `attempt` (1 = the first): min(maxMs, baseMs × factor^(attempt − 1)). */
export function backoffCeiling(attempt: number, backoff: Backoff): number {
  const steps = Math.min(Math.max(0, attempt - 1), 30);
  return Math.min(backoff.maxMs, backoff.baseMs * (backoff.factor ?? 2) ** steps);
}

/**
 * Exponential backoff with full jitter, the one formula of every retry in plumb: a whole number of
 * milliseconds drawn uniformly from [0, ceiling) (backoffCeiling), so clients that failed together
 * do not retry together. `random` is uniform in [0, 1) (injected so tests can pin it).
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number): number {
  return Math.floor(random() * backoffCeiling(attempt, backoff));
}
