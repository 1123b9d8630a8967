// The agent's checks of a revision as the source environment's status record keeps them (its
// `checks` field, written by apply's verify: docs/apply.md). Read defensively: a record without
// them, or with a shape this version does not know, has no checks, and the `checks` gate fails.

export type RecordedChecks = {
  revision_id: string;
  at: string;
  runs: number;
  passed: number;
  pass_ratio: number;
  latency_ms: { p50: number; p95: number; max: number };
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** The `checks` of a status record, or null when it holds none (or none this version can read). */
export function recordedChecksOf(record: unknown): RecordedChecks | null {
  const checks = isRecord(record) ? record.checks : undefined;
  if (!isRecord(checks) || !isRecord(checks.latency_ms)) return null;
  const { revision_id, at, runs, passed, pass_ratio, latency_ms } = checks;
  if (typeof revision_id !== "string" || typeof at !== "string") return null;
  if (![runs, passed, pass_ratio, latency_ms.p50, latency_ms.p95, latency_ms.max].every(isNumber))
    return null;
  return {
    revision_id,
    at,
    runs: runs as number,
    passed: passed as number,
    pass_ratio: pass_ratio as number,
    latency_ms: {
      p50: latency_ms.p50 as number,
      p95: latency_ms.p95 as number,
      max: latency_ms.max as number,
    },
  };
}
