import { createColors } from "picocolors";
import type { Plan } from "../diff/plan/plan-types.js";
import { redactPlan } from "../diff/secrets/redact.js";
import type { ApplyOutcome, ApplyReport, ApplyResult, ProgressEvent } from "../apply/apply-types.js";
import { formatChecksLine } from "../apply/verify/verify-stats.js";
import { escapeControls } from "../errors.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/**
 * One plain log line per result (no TTY), e.g. `apply: alpha converged revision r1 DEPLOYED in 2.1s`;
 * its control characters escaped: the revision ids are the server's, printed as answered (an
 * escape sequence in one cleared the terminal).
 */
const formatResultLine = (r: ApplyResult): string => escapeControls(resultText(r));

function resultText(r: ApplyResult): string {
  const revision = r.revision_id ? ` revision ${r.revision_id} ${r.revision_status ?? ""}`.trimEnd() : "";
  const superseded = r.superseded_by ? ` (superseded, followed ${r.superseded_by})` : "";
  const verify = r.verify ? ` verify ${r.verify.ok ? "passed" : "failed"}${verifyDetail(r.verify)}` : "";
  const code = r.verify?.code ? ` [${r.verify.code}]` : "";
  const message = r.message && r.outcome !== "converged" ? `: ${r.message}${code}` : "";
  return `${r.kind} ${r.name} ${r.outcome}${revision}${superseded}${verify} in ${seconds(r.elapsed_ms)}${message}`;
}

/**
 * ` (first token 120 ms: "pong")`: how fast and what the agent answered; with several runs (cases,
 * repeat), the checks instead: ` (9 of 9 runs passed (1), latency p50 …)`.
 */
function verifyDetail(verify: NonNullable<ApplyResult["verify"]>): string {
  if (verify.checks && verify.checks.runs > 1) return ` (${formatChecksLine(verify.checks)})`;
  const latency = verify.first_token_ms ?? verify.first_event_ms;
  if (latency === null || latency === undefined) return "";
  const what =
    verify.first_token_ms !== null && verify.first_token_ms !== undefined ? "first token" : "first event";
  const answer = verify.answer ? `: ${JSON.stringify(verify.answer)}` : "";
  return ` (${what} ${latency} ms${answer})`;
}

const ORDER: ApplyOutcome[] = ["converged", "accepted", "skipped", "failed", "timeout", "interrupted"];

/** An object apply had nothing to send to and nothing to check: not one of the changes it counts. */
const unchanged = (r: ApplyResult) => r.action === "noop" && r.outcome === "converged" && !r.verify;

/**
 * The final summary: counts of the changes (as many as the prompt asked about; unchanged objects
 * apart), then one line per object that did not converge.
 */
export function formatApplySummary(
  report: ApplyReport,
  elapsedMs: number,
  options: { color?: boolean } = {},
): string {
  const c = createColors(options.color ?? false);
  const same = report.results.filter(unchanged).length;
  const tally = { ...report.summary, converged: report.summary.converged - same };
  const counts = [
    ...ORDER.filter((o) => tally[o] > 0).map((o) => `${tally[o]} ${o}`),
    ...(same > 0 ? [`${same} unchanged`] : []),
  ];
  const lines = report.results
    .filter((r) => r.outcome !== "converged" && r.outcome !== "accepted")
    .map((r) => `  ${c.red("✗")} ${formatResultLine(r)}`);
  const head = report.ok ? c.green("Apply complete") : c.red("Apply did not converge");
  return (
    [`${c.bold(head)}: ${counts.join(", ") || "nothing to do"} in ${seconds(elapsedMs)}.`, ...lines].join(
      "\n",
    ) + "\n"
  );
}

/** `--output json`: the per-object results and the plan that was applied, secret values redacted. */
export function formatApplyJson(report: ApplyReport, plan: Plan): string {
  return `${JSON.stringify({ ...report, plan: redactPlan(plan) }, null, 2)}\n`;
}

export type Sink = { write(text: string): unknown };

/** Plain progress for logs and CI: one line when a phase starts that matters, and one per result. */
export function plainProgress(out: Sink): (event: ProgressEvent) => void {
  return (event) => {
    if (event.phase === "done" && event.result) {
      if (!unchanged(event.result)) out.write(`apply: ${formatResultLine(event.result)}\n`);
    } else if (event.phase === "sent" || event.phase === "verifying")
      out.write(`apply: ${event.kind} ${event.name} ${event.phase}\n`);
  };
}

/**
 * Live progress on a TTY: one line per object in flight (phase, revision status, elapsed), redrawn in
 * place, at most `rows` of them plus a count line; finished objects scroll up as plain lines.
 * `total` is the number of changes the prompt named: the count line says "3 of 5 changes done".
 * `tick` redraws every second so the clock keeps moving between events (injected by tests).
 */
export function ttyProgress(
  out: Sink,
  clock: { now(): number },
  options: {
    color?: boolean;
    rows?: number;
    total?: number;
    tick?: (redraw: () => void) => () => void;
  } = {},
) {
  const c = createColors(options.color ?? true);
  const rows = options.rows ?? 15;
  const active = new Map<string, ProgressEvent>();
  let drawn = 0;
  let done = 0;
  const started = clock.now();
  const clear = () => {
    if (drawn > 0) out.write(`\x1b[${drawn}A\x1b[0J`);
    drawn = 0;
  };
  const draw = () => {
    const lines = [...active.values()].slice(0, rows).map((e) => {
      const status = e.revision_status ? ` ${e.revision_status}` : "";
      return `  ${c.cyan("…")} ${e.name}  ${e.phase}${status}  ${c.dim(seconds(clock.now() - started))}`;
    });
    const of = options.total === undefined ? "" : ` of ${options.total}`;
    lines.push(
      c.dim(
        `  ${done}${of} ${options.total === undefined ? "" : "changes "}done, ${active.size} in progress`,
      ),
    );
    out.write(`${lines.join("\n")}\n`);
    drawn = lines.length;
  };
  const tick =
    options.tick ??
    ((redraw: () => void) => {
      const timer = setInterval(redraw, 1_000);
      timer.unref();
      return () => clearInterval(timer);
    });
  let stopTicking: (() => void) | undefined;
  return {
    onProgress(event: ProgressEvent) {
      const key = `${event.kind}/${event.name}`;
      stopTicking ??= tick(() => {
        if (active.size === 0) return;
        clear();
        draw();
      });
      clear();
      if (event.phase === "done" && event.result && unchanged(event.result)) {
        active.delete(key);
      } else if (event.phase === "done" && event.result) {
        active.delete(key);
        // Only what the prompt counted: creates and updates (a refused change is shown, not counted).
        if (event.result.action === "create" || event.result.action === "update") done += 1;
        const ok = event.result.outcome === "converged" || event.result.outcome === "accepted";
        out.write(`${ok ? c.green("✓") : c.red("✗")} ${formatResultLine(event.result)}\n`);
      } else {
        active.set(key, {
          ...active.get(key),
          ...event,
          revision_status: event.revision_status ?? active.get(key)?.revision_status,
        });
      }
      draw();
    },
    finish() {
      stopTicking?.();
      clear();
    },
  };
}
