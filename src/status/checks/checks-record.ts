import { type Static, Type } from "@sinclair/typebox";

// The agent's checks (spec.verify) of one revision, as its status record keeps them: what was
// measured, never what the agent answered. `plumb promote`'s `checks` gate reads it. This module
// builds a TypeBox schema: the controller's and validate's code import only its type (what reads a
// record goes in checks-record-problems.ts), as they must not load TypeBox at run time
// (test/schemas/validators.test.ts).

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
  /**
   * sha256 of the applied_spec and secret_fingerprints of the status record when the checks ran
   * (checks-record-applied.ts): which applied change they verified. Absent in an older plumb's
   * records, which promote's checks gate does not trust.
   */
  applied_digest: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
  /** Why runs failed, one entry per case and reason (at most 20); absent when all passed. */
  failures: Type.Optional(Type.Array(Type.Object({ case: Type.String(), reason: Type.String() }))),
});
export type ChecksRecord = Static<typeof ChecksRecord>;
