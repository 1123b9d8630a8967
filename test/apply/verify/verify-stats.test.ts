import { describe, expect, it } from "vitest";
import {
  checkExpectations,
  compileExpectRegex,
  MAX_MATCHED_CHARS,
} from "../../../src/apply/verify/verify-expect.js";
import {
  buildChecksRecord,
  type CheckRun,
  formatChecksLine,
  judgeChecks,
  MAX_RECORDED_FAILURES,
  percentile,
} from "../../../src/apply/verify/verify-stats.js";

const run = (ok: boolean, total: number, extra: Partial<CheckRun> = {}): CheckRun => ({
  case: "greet",
  ok,
  reason: ok ? null : 'the answer does not contain "hello"',
  total_ms: total,
  first_token_ms: total / 2,
  ...extra,
});

describe("percentile (nearest rank)", () => {
  it("is always a measured value: the smallest with at least p% at or below it", () => {
    const values = Array.from({ length: 20 }, (_, i) => (i + 1) * 10); // 10..200, unsorted below
    const shuffled = [...values].reverse();
    expect(percentile(shuffled, 50)).toBe(100);
    expect(percentile(shuffled, 95)).toBe(190); // the 19th of 20
    expect(percentile(shuffled, 100)).toBe(200);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([], 95)).toBe(0);
    expect(shuffled[0]).toBe(200); // the input is not sorted in place
  });
});

describe("buildChecksRecord", () => {
  it("counts runs and passes, and gives latency and first-token percentiles", () => {
    const runs = [run(true, 100), run(true, 300), run(false, 200), run(true, 400)];
    const checks = buildChecksRecord(runs, "rev-1", "2026-11-25T19:00:00.000Z");
    expect(checks).toEqual({
      revision_id: "rev-1",
      at: "2026-11-25T19:00:00.000Z",
      runs: 4,
      passed: 3,
      pass_ratio: 0.75,
      latency_ms: { p50: 200, p95: 400, max: 400 },
      first_token_ms: { p50: 100, p95: 200 },
      failures: [{ case: "greet", reason: 'the answer does not contain "hello" (1 of 4 runs)' }],
    });
  });

  it("leaves out first_token_ms when no run streamed a token, and failures when all passed", () => {
    const checks = buildChecksRecord([run(true, 50, { first_token_ms: null })], "r", "t");
    expect(checks.first_token_ms).toBeUndefined();
    expect(checks.failures).toBeUndefined();
    expect(checks.pass_ratio).toBe(1);
  });

  it("groups failures per case and reason, and keeps at most 20", () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      run(false, 10, { case: `case-${i}`, reason: "the run failed: boom" }),
    );
    const repeated = [run(false, 10), run(false, 10), run(true, 10)];
    expect(buildChecksRecord(repeated, "r", "t").failures).toEqual([
      { case: "greet", reason: 'the answer does not contain "hello" (2 of 3 runs)' },
    ]);
    expect(buildChecksRecord(many, "r", "t").failures).toHaveLength(MAX_RECORDED_FAILURES);
  });

  it("is empty, with a zero ratio, when nothing ran", () => {
    const checks = buildChecksRecord([], "r", "t");
    expect(checks).toMatchObject({
      runs: 0,
      passed: 0,
      pass_ratio: 0,
      latency_ms: { p50: 0, p95: 0, max: 0 },
    });
    expect(judgeChecks(checks, {})).toBe("no check ran");
  });
});

describe("judgeChecks", () => {
  const checks = buildChecksRecord([run(true, 100), run(true, 900), run(false, 200)], "r", "t");

  it("requires every run to pass by default", () => {
    expect(judgeChecks(checks, {})).toBe("pass ratio 0.67 is below min_pass_ratio 1");
  });

  it("accepts a ratio at or above min_pass_ratio", () => {
    expect(judgeChecks(checks, { min_pass_ratio: 0.6 })).toBeNull();
    expect(judgeChecks(checks, { min_pass_ratio: 2 / 3 })).toBeNull();
    expect(judgeChecks(checks, { min_pass_ratio: 0.7 })).toContain("below min_pass_ratio 0.7");
  });

  it("refuses a p95 above max_latency_p95_ms, and names both problems", () => {
    expect(judgeChecks(checks, { min_pass_ratio: 0.5, max_latency_p95_ms: 900 })).toBeNull();
    expect(judgeChecks(checks, { min_pass_ratio: 0.5, max_latency_p95_ms: 899 })).toBe(
      "latency p95 900 ms is above max_latency_p95_ms 899",
    );
    expect(judgeChecks(checks, { max_latency_p95_ms: 10 })).toBe(
      "pass ratio 0.67 is below min_pass_ratio 1; latency p95 900 ms is above max_latency_p95_ms 10",
    );
  });

  it("formats one line for reports", () => {
    expect(formatChecksLine(checks)).toBe(
      "2 of 3 runs passed (0.67), latency p50 200 ms, p95 900 ms, first token p95 450 ms",
    );
  });
});

describe("checkExpectations", () => {
  it("expect_contains: the text must be in the answer", () => {
    expect(checkExpectations("hello world", { expect_contains: "world" })).toBeNull();
    expect(checkExpectations("hello world", { expect_contains: "World" })).toBe(
      'the answer does not contain "World"',
    );
  });

  it("expect_not_contains: the text must not be in the answer", () => {
    expect(checkExpectations("pong", { expect_not_contains: "ping" })).toBeNull();
    expect(checkExpectations("ping pong", { expect_not_contains: "ping" })).toBe(
      'the answer contains "ping"',
    );
  });

  it("expect_regex: searched, not anchored", () => {
    expect(checkExpectations("order 1234 shipped", { expect_regex: "\\d{4}" })).toBeNull();
    expect(checkExpectations("order shipped", { expect_regex: "^order \\d+" })).toBe(
      "the answer does not match /^order \\d+/",
    );
    expect(checkExpectations("x", { expect_regex: "(" })).toMatch(
      /^expect_regex is not a valid regular expression/,
    );
  });

  it("every expectation given must hold; none passes any answer", () => {
    const all = { expect_contains: "a", expect_not_contains: "b", expect_regex: "c$" };
    expect(checkExpectations("a c", all)).toBeNull();
    expect(checkExpectations("a b c", all)).toBe('the answer contains "b"');
    expect(checkExpectations("a c d", all)).toBe("the answer does not match /c$/");
    expect(checkExpectations("", {})).toBeNull();
  });

  it("matches only the first 64 KiB of a long answer", () => {
    const long = `${"x".repeat(MAX_MATCHED_CHARS)}needle`;
    expect(checkExpectations(long, { expect_contains: "needle" })).toContain("does not contain");
  });

  it("compileExpectRegex gives the pattern or why it is none", () => {
    expect(compileExpectRegex("a+")).toBeInstanceOf(RegExp);
    expect(compileExpectRegex("[")).toMatch(/Invalid regular expression/);
  });
});
