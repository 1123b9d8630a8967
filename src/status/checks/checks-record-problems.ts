import type { ChecksRecord } from "./checks-record.js";

// The checks record's own consistency, and which of two records stands, apart from its TypeBox shape
// (checks-record.ts): promote's gate runs in the controller, which must not load TypeBox at run time
// (test/schemas/validators.test.ts).

/** How far a recorded pass_ratio may be from passed / runs (apply writes the exact quotient). */
const RATIO_TOLERANCE = 1e-9;

const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0;
const isMeasure = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0;
/** A value as the record holds it, JSON-escaped and cut to 40 characters. */
function shown(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "missing";
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/**
 * What makes a checks record impossible or self-contradictory (empty when none): counts that are
 * not whole numbers, passed above runs, a pass_ratio outside [0, 1] or other than passed / runs
 * (0 when nothing ran), latencies that are not numbers or not p50 <= p95 <= max. A record is
 * written by apply from its own counts, so any of these means it was edited or damaged: the
 * promotion gate trusts none of its values (docs/environments.md, "Gates").
 */
export function checksRecordProblems(record: ChecksRecord): string[] {
  const data = record as unknown as Record<string, unknown>;
  const { runs, passed, pass_ratio: ratio } = data;
  const problems: string[] = [];
  if (!isCount(runs)) problems.push(`runs is ${shown(runs)}, not a whole number of at least 0`);
  if (!isCount(passed)) problems.push(`passed is ${shown(passed)}, not a whole number of at least 0`);
  if (isCount(runs) && isCount(passed) && passed > runs)
    problems.push(`passed ${passed} is more than runs ${runs}`);
  if (typeof ratio !== "number" || !Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    problems.push(`pass_ratio is ${shown(ratio)}, not a number from 0 to 1`);
  else if (isCount(runs) && isCount(passed) && passed <= runs) {
    const expected = runs === 0 ? 0 : passed / runs;
    if (Math.abs(ratio - expected) > RATIO_TOLERANCE)
      problems.push(`pass_ratio ${ratio} is not ${passed}/${runs} passed (${Number(expected.toFixed(4))})`);
  }
  problems.push(...latencyProblems(data.latency_ms));
  if (isCount(runs) && isCount(passed) && passed <= runs)
    problems.push(...failureProblems(data.failures, runs - passed));
  return problems;
}

/**
 * apply lists each failed run's case and reason (one entry per case and reason: never more entries
 * than runs failed), so `passed` raised to `runs` over a record that still says why 2 runs failed is
 * a contradiction; it was promoted as 10/10. No list with runs failed is not one: a record of an
 * older plumb, or one written by hand, may carry none.
 */
function failureProblems(failures: unknown, failed: number): string[] {
  if (failures === undefined) return [];
  if (!Array.isArray(failures)) return [`failures is ${shown(failures)}, not a list`];
  if (failures.length <= failed) return [];
  const listed = `${failures.length} ${failures.length === 1 ? "failure is" : "failures are"} listed`;
  return [
    `${listed}, and ${failed === 0 ? "every run passed" : `only ${failed} ${failed === 1 ? "run" : "runs"} failed`}`,
  ];
}

function latencyProblems(latency: unknown): string[] {
  if (typeof latency !== "object" || latency === null)
    return [`latency_ms is ${shown(latency)}, not an object`];
  const values = latency as Record<string, unknown>;
  const bad = (["p50", "p95", "max"] as const).filter((key) => !isMeasure(values[key]));
  if (bad.length > 0)
    return bad.map((key) => `latency_ms.${key} is ${shown(values[key])}, not a number of at least 0`);
  const { p50, p95, max } = values as { p50: number; p95: number; max: number };
  return p50 <= p95 && p95 <= max ? [] : [`latency_ms is not p50 <= p95 <= max (${p50}, ${p95}, ${max})`];
}

/**
 * The first of checksRecordProblems, or null when the record is consistent. Every place that shows
 * a record's figures (the status page's matrix and detail, `plumb status`, a plan's last checks)
 * shows this instead of figures it cannot trust: "checks record invalid: …" (docs/environments.md).
 */
export function checksRecordInvalid(record: ChecksRecord): string | null {
  return checksRecordProblems(record)[0] ?? null;
}

const finished = (checks: ChecksRecord) => Date.parse(checks.at) || 0;

/**
 * Of two checks records of an object (its own store's and one nearby), the one that finished last
 * (`a` on a tie); undefined when neither is given. Verify runs again on the same revision after a
 * failed check, from whichever store's apply comes next, so a revision's verdict can be overturned
 * in another store: the later `at` stands. A time that does not parse counts as earliest.
 */
export function laterChecks(
  a: ChecksRecord | null | undefined,
  b: ChecksRecord | null | undefined,
): ChecksRecord | undefined {
  if (!a) return b ?? undefined;
  if (!b) return a;
  return finished(b) > finished(a) ? b : a;
}
