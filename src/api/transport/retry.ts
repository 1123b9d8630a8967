import type { Backoff } from "../../clock.js";

// Pure parts of the retry policy: which failures are retried, and how long to wait.

/** Statuses worth another attempt: rate limited, or a server/gateway failure that may be transient. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/**
 * Methods safe to repeat. PATCH is here on purpose: plumb's PATCH bodies hold absolute values merged
 * into the deployment (decisions.md: null means "leave unchanged", nothing is incremented), so sending
 * the same body twice leaves the same state. A repeated PATCH that creates a revision may create a
 * second identical one only if the first response was lost; src/reconcile checks the latest revision.
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "OPTIONS",
  "PUT",
  "PATCH",
  "DELETE",
]);

export type RetryPolicy = {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff ceiling; doubles each attempt. */
  baseDelayMs: number;
  /** Ceiling of one backoff wait. */
  maxDelayMs: number;
  /** Give up when the next wait would end past this long after the first attempt. */
  maxElapsedMs: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxElapsedMs: 120_000,
};

/** The policy's waits for backoffDelay (src/clock.ts: full jitter under a doubling ceiling). */
export const retryBackoff = (policy: RetryPolicy): Backoff => ({
  baseMs: policy.baseDelayMs,
  maxMs: policy.maxDelayMs,
});

/**
 * `Retry-After` as milliseconds from `now`: delta-seconds ("3", "1.5") or an HTTP date.
 * undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  if (!/^[A-Za-z]{3},/.test(text)) return undefined; // HTTP dates start with the weekday
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Low-level error codes meaning the request never reached the server, so even a POST may be resent. */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

/** Digs the system error code out of undici's `TypeError: fetch failed` chain. */
export function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = current.cause;
  }
  return undefined;
}

export const wasNeverSent = (error: unknown): boolean => NOT_SENT_CODES.has(networkCode(error) ?? "");
