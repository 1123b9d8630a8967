import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  networkCode,
  parseRetryAfter,
  retryBackoff,
  wasNeverSent,
} from "../../../src/api/transport/retry.js";
import { backoffDelay } from "../../../src/clock.js";

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  it("reads delta-seconds", () => {
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1500);
    expect(parseRetryAfter("0", now)).toBe(0);
  });
  it("reads an HTTP date relative to now", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0);
  });
  it("ignores absent or unreadable values", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-3", now)).toBeUndefined();
  });
});

describe("retryBackoff", () => {
  const policy = retryBackoff({ ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 });
  it("gives the policy's base and ceiling to full jitter", () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, policy, () => 0.5))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(3, policy, () => 0.999)).toBe(399);
  });
});

describe("network codes", () => {
  it("finds the code in undici's cause chain", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const error = new TypeError("fetch failed", { cause });
    expect(networkCode(error)).toBe("ECONNREFUSED");
    expect(wasNeverSent(error)).toBe(true);
    const reset = new TypeError("fetch failed", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(wasNeverSent(reset)).toBe(false);
    expect(networkCode(new Error("plain"))).toBeUndefined();
  });
});
