import type { ChecksRecord } from "../../status/checks/checks-record.js";

// Pure: the checks of one revision from its runs (pass ratio, latency percentiles, failures) and
// whether they meet spec.verify's thresholds.

/** One run of a case (or of the smoke question): whether it passed and how long it took. */
export type CheckRun = {
  case: string;
  ok: boolean;
  /** Why it failed (never the answer); null when it passed. */
  reason: string | null;
  /** From sending the run to the end of its stream (or to giving up on it). */
  total_ms: number;
  /** From sending the run to the answer's first token; null when none came. */
  first_token_ms: number | null;
};

export type Thresholds = { min_pass_ratio?: number | undefined; max_latency_p95_ms?: number | undefined };

/** The failures kept in a record: enough to act on, bounded however many runs failed. */
export const MAX_RECORDED_FAILURES = 20;

/**
 * Nearest-rank percentile (the smallest value with at least p% of the values at or below it):
 * always one of the measured values, p95 of 20 runs is the 19th fastest. 0 for no values.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** The record of one revision's checks (the status record's `checks`). */
export function buildChecksRecord(runs: readonly CheckRun[], revisionId: string, at: string): ChecksRecord {
  const passed = runs.filter((r) => r.ok).length;
  const totals = runs.map((r) => r.total_ms);
  const firstTokens = runs.flatMap((r) => (r.first_token_ms === null ? [] : [r.first_token_ms]));
  const failures = summariseFailures(runs);
  return {
    revision_id: revisionId,
    at,
    runs: runs.length,
    passed,
    pass_ratio: runs.length === 0 ? 0 : passed / runs.length,
    latency_ms: { p50: percentile(totals, 50), p95: percentile(totals, 95), max: Math.max(0, ...totals) },
    ...(firstTokens.length > 0
      ? { first_token_ms: { p50: percentile(firstTokens, 50), p95: percentile(firstTokens, 95) } }
      : {}),
    ...(failures.length > 0 ? { failures } : {}),
  };
}

/** One entry per case and reason ("(3 of 5 runs)" when it repeats), at most MAX_RECORDED_FAILURES. */
function summariseFailures(runs: readonly CheckRun[]): Array<{ case: string; reason: string }> {
  const perCase = new Map<string, number>();
  for (const r of runs) perCase.set(r.case, (perCase.get(r.case) ?? 0) + 1);
  const counted = new Map<string, { case: string; reason: string; count: number }>();
  for (const r of runs) {
    if (r.ok) continue;
    const reason = r.reason ?? "failed";
    const key = JSON.stringify([r.case, reason]);
    const entry = counted.get(key) ?? { case: r.case, reason, count: 0 };
    entry.count += 1;
    counted.set(key, entry);
  }
  return [...counted.values()].slice(0, MAX_RECORDED_FAILURES).map((f) => {
    const of = perCase.get(f.case) ?? 1;
    return { case: f.case, reason: of > 1 ? `${f.reason} (${f.count} of ${of} runs)` : f.reason };
  });
}

/** Why the checks fall below the thresholds, or null when they meet them (min_pass_ratio defaults to 1). */
export function judgeChecks(checks: ChecksRecord, thresholds: Thresholds): string | null {
  const minRatio = thresholds.min_pass_ratio ?? 1;
  if (checks.runs === 0) return "no check ran";
  const problems: string[] = [];
  if (checks.pass_ratio < minRatio)
    problems.push(`pass ratio ${formatRatio(checks.pass_ratio)} is below min_pass_ratio ${minRatio}`);
  const maxP95 = thresholds.max_latency_p95_ms;
  if (maxP95 !== undefined && checks.latency_ms.p95 > maxP95)
    problems.push(`latency p95 ${checks.latency_ms.p95} ms is above max_latency_p95_ms ${maxP95}`);
  return problems.length === 0 ? null : problems.join("; ");
}

/** 0.875 → "0.88"; 1 → "1". */
const formatRatio = (ratio: number): string => String(Math.round(ratio * 100) / 100);

/** One line for reports: `7 of 8 runs passed (0.88), latency p50 120 ms, p95 410 ms, first token p95 90 ms`. */
export function formatChecksLine(checks: ChecksRecord): string {
  const token = checks.first_token_ms ? `, first token p95 ${checks.first_token_ms.p95} ms` : "";
  return `${checks.passed} of ${checks.runs} runs passed (${formatRatio(checks.pass_ratio)}), latency p50 ${checks.latency_ms.p50} ms, p95 ${checks.latency_ms.p95} ms${token}`;
}
