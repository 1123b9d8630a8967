import { LRUCache } from "lru-cache";

// Failed (or missing) authentication, limited per client address: a fixed window per address in a
// bounded LRU table, so memory stays flat however many addresses or keys are tried.

export const DEFAULT_AUTH_FAILURE_LIMIT = { count: 100, intervalSeconds: 10 };
const MAX_ADDRESSES = 10_000;

export type FailureVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Counts one failure of `address`; refused once it exceeds `limit.count` within the window. */
export function createFailureLimiter(
  limit: { count: number; intervalSeconds: number },
  now: () => number,
): (address: string) => FailureVerdict {
  const windows = new LRUCache<string, { start: number; count: number }>({ max: MAX_ADDRESSES });
  const intervalMs = limit.intervalSeconds * 1000;
  return (address) => {
    const t = now();
    let window = windows.get(address);
    if (!window || t >= window.start + intervalMs) {
      window = { start: t, count: 0 };
      windows.set(address, window);
    }
    if (window.count >= limit.count)
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((window.start + intervalMs - t) / 1000)),
      };
    window.count += 1;
    return { allowed: true };
  };
}
