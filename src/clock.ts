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
