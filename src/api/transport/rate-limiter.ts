import { createHash } from "node:crypto";
import pLimit from "p-limit";
import type { Clock } from "../../clock.js";

/**
 * Client-side rate limiting, so a healthy run never meets a 429 (spec 8.2).
 *
 * A token bucket holding at most `burst` tokens, refilled at `(limit × utilisation − burst) / window`.
 * In any window of `windowMs` it grants at most `burst + rate × windowMs = limit × utilisation`, which
 * stays under the server's `limit` whether the server counts fixed or sliding windows, with slack for
 * network jitter. Tokens are taken at the moment of sending (never reserved ahead), so a timer that
 * fires late cannot bunch requests; waiters queue per bucket and are served in order.
 */
export type BucketConfig = {
  /** Requests the server allows per window, e.g. 1000. */
  limit: number;
  windowMs: number;
  /**
   * Share of the limit the client may use (0..1]; default 0.99: the 1% left over absorbs network
   * jitter (requests sent apart that arrive together), and a small burst keeps the steady rate at
   * 98% of the budget (bench/apply.bench.ts).
   */
  utilisation?: number;
  /** Tokens available at once; default 1% of the limit. */
  burst?: number;
};

export class TokenBucket {
  readonly capacity: number;
  /** Tokens per millisecond. */
  readonly rate: number;
  private tokens: number;
  private at: number;

  constructor(config: BucketConfig, now: number) {
    const budget = Math.floor(config.limit * (config.utilisation ?? 0.99));
    this.capacity = Math.max(1, Math.min(config.burst ?? Math.ceil(config.limit * 0.01), budget - 1));
    this.rate = (budget - this.capacity) / config.windowMs;
    if (!(this.rate > 0))
      throw new RangeError("rate limit too small for the burst: raise limit or lower burst");
    this.tokens = this.capacity;
    this.at = now;
  }

  private refill(now: number): void {
    if (now <= this.at) return;
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.at) * this.rate);
    this.at = now;
  }

  /** Takes one token if there is one now (0); otherwise the milliseconds until there will be. */
  tryTake(now: number): number {
    this.refill(now);
    if (now >= this.at && this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    const until = Math.max(0, this.at - now) + Math.max(0, 1 - this.tokens) / this.rate;
    return Math.max(1, Math.ceil(until));
  }

  /** The server said "wait until `until`" (429 Retry-After): nothing more is granted before then. */
  pauseUntil(until: number, now: number): void {
    this.refill(now);
    if (until <= this.at) return;
    this.tokens = Math.min(this.tokens, 0);
    this.at = until;
  }
}

/** The categories of spec 8.2 that plumb's routes can fall into. */
export type RateLimitCategory = { name: string; limit: number; windowMs: number };

/** Control plane, platform and agent-server routes all fall under "Default (API key)" (decisions.md). */
export const DEFAULT_API_KEY_CATEGORY: RateLimitCategory = {
  name: "default-api-key",
  limit: 1000,
  windowMs: 10_000,
};

export type RateLimiterOptions = {
  clock: Clock;
  /** Picks the category of a request; default: every request is "Default (API key)". */
  categorize?: (method: string, path: string) => RateLimitCategory;
  utilisation?: number;
  burst?: number;
  /** Requests in flight at once, across every identity; default 16. */
  maxConcurrency?: number;
};

type Permit = { identity: string; method: string; path: string; signal?: AbortSignal };

type RateLimiterStats = { granted: number; waited: number; waitedMs: number };

export type RateLimiter = {
  /** Runs `send` inside a concurrency slot once the identity's bucket grants a token; reports the wait. */
  schedule<T>(permit: Permit, send: (waitedMs: number) => Promise<T>): Promise<T>;
  /** After a 429: hold every request of this identity and category until `until` (epoch ms). */
  pause(permit: Omit<Permit, "signal">, until: number): void;
  stats(): RateLimiterStats;
};

/** Identities are hashed so the limiter's keys never hold a raw API key. */
export const identityOf = (secret: string): string =>
  createHash("sha256").update(secret).digest("hex").slice(0, 16);

type Waiter = { resolve: () => void; reject: (reason: unknown) => void; signal?: AbortSignal | undefined };

/** A bucket with its FIFO of waiters; one pump per bucket hands out tokens as they appear. */
class BucketQueue {
  private readonly waiters: Waiter[] = [];
  private pumping = false;

  constructor(
    readonly bucket: TokenBucket,
    private readonly clock: Clock,
  ) {}

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason as Error);
      };
      waiter.resolve = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
      if (!this.pumping) void this.pump();
    });
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        const wait = this.bucket.tryTake(this.clock.now());
        if (wait === 0) this.waiters.shift()?.resolve();
        else await this.clock.sleep(wait);
      }
    } finally {
      this.pumping = false;
    }
  }
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { clock } = options;
  const categorize = options.categorize ?? (() => DEFAULT_API_KEY_CATEGORY);
  const limit = pLimit(options.maxConcurrency ?? 16);
  const queues = new Map<string, BucketQueue>();
  const stats: RateLimiterStats = { granted: 0, waited: 0, waitedMs: 0 };

  const queueFor = (permit: Omit<Permit, "signal">): BucketQueue => {
    const category = categorize(permit.method, permit.path);
    const key = `${permit.identity}:${category.name}`;
    let queue = queues.get(key);
    if (!queue) {
      const config = { ...category, utilisation: options.utilisation, burst: options.burst };
      queue = new BucketQueue(new TokenBucket(config, clock.now()), clock);
      queues.set(key, queue);
    }
    return queue;
  };

  return {
    // Slot first, then token, then send at once: a token taken but sent later could bunch up.
    schedule: (permit, send) =>
      limit(async () => {
        const started = clock.now();
        await queueFor(permit).acquire(permit.signal);
        const waitedMs = clock.now() - started;
        stats.granted += 1;
        if (waitedMs > 0) {
          stats.waited += 1;
          stats.waitedMs += waitedMs;
        }
        return send(waitedMs);
      }),
    pause: (permit, until) => queueFor(permit).bucket.pauseUntil(until, clock.now()),
    stats: () => ({ ...stats }),
  };
}
