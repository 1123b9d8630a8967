import { type Static, Type } from "@sinclair/typebox";

// The agent's checks (spec.verify) of one revision, as its status record keeps them: what was
// measured, never what the agent answered. `plumb promote`'s `checks` gate reads it.

const Percentiles = Type.Object({ p50: Type.Number(), p95: Type.Number() });

export const ChecksRecord = Type.Object({
  /** The revision the checks ran against (the active one once DEPLOYED). */
  revision_id: Type.String(),
  /** ISO 8601 time the checks finished. */
  at: Type.String(),
  runs: Type.Integer({ minimum: 0 }),
  passed: Type.Integer({ minimum: 0 }),
  /** passed / runs (0 when nothing ran). */
  pass_ratio: Type.Number({ minimum: 0, maximum: 1 }),
  /** Total time of a run, from sending it to the end of its stream; nearest-rank percentiles. */
  latency_ms: Type.Object({ p50: Type.Number(), p95: Type.Number(), max: Type.Number() }),
  /** Time to the answer's first token, over the runs that streamed one. */
  first_token_ms: Type.Optional(Percentiles),
  /** Why runs failed, one entry per case and reason (at most 20); absent when all passed. */
  failures: Type.Optional(Type.Array(Type.Object({ case: Type.String(), reason: Type.String() }))),
});
export type ChecksRecord = Static<typeof ChecksRecord>;

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
