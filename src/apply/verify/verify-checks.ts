import pLimit from "p-limit";
import type { Verify, VerifyCase } from "../../schema/manifest.js";
import type { VerifyResult } from "../apply-types.js";
import { runVerify, type VerifyContext } from "./verify.js";
import { checkExpectations } from "./verify-expect.js";
import { buildChecksRecord, type CheckRun, formatChecksLine, judgeChecks } from "./verify-stats.js";
import { fullAnswer, keptText, readRunStream } from "./verify-stream.js";

// spec.verify as a small evaluation: the smoke question (on plumb's thread, as before) and every
// case, `repeat` times each, then pass ratio and latency against the thresholds. Each run is
// bounded by timeout_seconds; case runs go `concurrency` at a time, each on a fresh stateless
// thread; the whole is bounded by what is left of apply's --timeout.

export type ChecksContext = VerifyContext & {
  /** The revision checked (the record's revision_id). */
  revisionId: string;
  /** Milliseconds left of apply's budget; runs not started by then fail "not run". */
  budgetMs: number;
};

const DEFAULT_CONCURRENCY = 4;

/** A case's run input: a string is one user message. */
const inputOf = (input: VerifyCase["input"]): Record<string, unknown> =>
  typeof input === "string" ? { messages: [{ role: "user", content: input }] } : input;

/** One case run, stateless and streamed, bounded by timeout_seconds (and the evaluation's signal). */
async function runCase(baseUrl: string, spec: Verify, c: VerifyCase, ctx: ChecksContext): Promise<CheckRun> {
  const { clock } = ctx;
  const started = clock.now();
  const seconds = spec.timeout_seconds ?? 60;
  const budget = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, budget.signal]) : budget.signal;
  const timer = clock.sleep(seconds * 1000, signal).then(
    () => budget.abort(new Error("verify timeout")),
    () => undefined,
  );
  const done = (ok: boolean, reason: string | null, firstToken: number | null = null): CheckRun => ({
    case: c.name,
    ok,
    // Redacted, then clipped: a run's error event may hold 16 MiB (verify-stream.ts, MAX_KEPT_TEXT).
    reason: reason === null ? null : keptText(ctx.agent.redact(reason)),
    total_ms: clock.now() - started,
    first_token_ms: firstToken,
  });
  try {
    const events = ctx.agent.streamStatelessRun(
      baseUrl,
      {
        assistant_id: spec.assistant_id,
        input: inputOf(c.input),
        stream_mode: ["values", "messages-tuple"],
        on_disconnect: "cancel",
      },
      { signal },
    );
    const streamed = await readRunStream(events, clock);
    if (streamed.error !== null)
      return done(false, `the run failed: ${streamed.error}`, streamed.firstTokenMs);
    const answer = streamed.messages === null ? null : fullAnswer(streamed.messages);
    if (answer === null) return done(false, "no ai message answered", streamed.firstTokenMs);
    return done(checkExpectations(answer, c) === null, checkExpectations(answer, c), streamed.firstTokenMs);
  } catch (error) {
    if (budget.signal.aborted) return done(false, `no answer within ${seconds}s`);
    if (ctx.signal?.aborted) return done(false, "interrupted");
    return done(
      false,
      `the run could not be made: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    budget.abort();
    await timer;
  }
}

/** The smoke question's runs, one after another on plumb's thread; the first result is reported. */
async function runSmoke(
  baseUrl: string,
  spec: Verify,
  input: Record<string, unknown>,
  previousThreadId: string | null,
  ctx: ChecksContext,
): Promise<{ first: VerifyResult; runs: CheckRun[] }> {
  const runs: CheckRun[] = [];
  let first: VerifyResult | undefined;
  let threadId = previousThreadId;
  for (let i = 0; i < (spec.repeat ?? 1); i++) {
    const started = ctx.clock.now();
    const result = await runVerify(baseUrl, { ...spec, input }, threadId, ctx);
    first ??= result;
    threadId = result.thread_id ?? threadId;
    runs.push({
      case: "smoke",
      ok: result.ok,
      reason: result.ok ? null : result.message,
      total_ms: ctx.clock.now() - started,
      first_token_ms: result.first_token_ms ?? null,
    });
    if (ctx.signal?.aborted) break;
  }
  return { first: first!, runs };
}

/** Runs spec.verify's smoke question and cases and judges them; `ok` false below the thresholds. */
export async function runChecks(
  baseUrl: string,
  spec: Verify,
  previousThreadId: string | null,
  ctx: ChecksContext,
): Promise<VerifyResult> {
  const overall = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, overall.signal]) : overall.signal;
  const timer = ctx.clock.sleep(Math.max(0, ctx.budgetMs), signal).then(
    () => overall.abort(new Error("apply timeout")),
    () => undefined,
  );
  const inner = { ...ctx, signal };
  try {
    const smoke = spec.input ? await runSmoke(baseUrl, spec, spec.input, previousThreadId, inner) : null;
    const limit = pLimit(spec.concurrency ?? DEFAULT_CONCURRENCY);
    const planned = (spec.cases ?? []).flatMap((c) => Array.from({ length: spec.repeat ?? 1 }, () => c));
    const caseRuns = await Promise.all(
      planned.map((c) =>
        limit(() =>
          signal.aborted
            ? Promise.resolve<CheckRun>({
                case: c.name,
                ok: false,
                reason: overall.signal.aborted ? "not run: apply's --timeout ran out" : "interrupted",
                total_ms: 0,
                first_token_ms: null,
              })
            : runCase(baseUrl, spec, c, inner),
        ),
      ),
    );
    const runs = [...(smoke?.runs ?? []), ...caseRuns];
    const checks = buildChecksRecord(runs, ctx.revisionId, new Date(ctx.clock.now()).toISOString());
    const problem = judgeChecks(checks, spec);
    const legacy = smoke !== null && runs.length === 1;
    const message = legacy
      ? smoke.first.message
      : problem === null
        ? formatChecksLine(checks)
        : `${problem} (${formatChecksLine(checks)})${firstFailure(checks)}`;
    return {
      ...(smoke?.first ?? { thread_id: previousThreadId, run_id: null }),
      ok: problem === null,
      message,
      checks,
      runs,
      ...(problem === null ? {} : { code: "verify-failed" as const }),
    };
  } finally {
    overall.abort();
    await timer;
  }
}

const firstFailure = (checks: { failures?: Array<{ case: string; reason: string }> | undefined }) => {
  const failure = checks.failures?.[0];
  return failure ? `; ${failure.case}: ${failure.reason}` : "";
};
