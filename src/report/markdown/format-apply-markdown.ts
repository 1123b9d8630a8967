import type { ApplyOutcome, ApplyReport, ApplyResult } from "../../apply/apply-types.js";
import { formatChecksLine } from "../../apply/verify/verify-stats.js";
import type { Plan, PlannedChange } from "../../diff/plan/plan-types.js";
import type { PruneResult } from "../../reconcile/prune/prune.js";
import { changeLines, headline } from "../format-lines.js";
import { MARKDOWN_LIMIT } from "./format-markdown.js";
import { count } from "../plural.js";
import { escapeControls } from "../../errors.js";
import { formatContextLine, type ReportContext } from "../report-context.js";
import { cutLine, htmlCode, linesWithin, markdownCode, markdownText } from "./markdown-text.js";

// `plumb apply --output markdown`: the apply result as a pull-request comment, as Atlantis posts on
// merge: outcome counts, one row per object (outcome, revision, verify, time), what changed and
// why anything failed in collapsible sections; under GitHub's comment size limit. Pure; secret
// values never reach it (change lines show secrets by name).

export const APPLY_COMMENT_MARKER = "<!-- plumb apply -->";

const OUTCOMES: ApplyOutcome[] = ["converged", "accepted", "skipped", "failed", "timeout", "interrupted"];
const ICON: Record<ApplyOutcome, string> = {
  converged: "✅",
  accepted: "📤",
  skipped: "⏭️",
  failed: "❌",
  timeout: "⏱️",
  interrupted: "⏹️",
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function verifyCell(r: ApplyResult): string {
  if (!r.verify) return "—";
  const checks = r.verify.checks;
  if (checks && checks.runs > 1)
    return `${r.verify.ok ? "passed" : "failed"} ${checks.passed}/${checks.runs} (p95 ${checks.latency_ms.p95} ms)`;
  const latency = r.verify.first_token_ms ?? r.verify.first_event_ms;
  return `${r.verify.ok ? "passed" : "failed"}${latency === null || latency === undefined ? "" : ` (${latency} ms)`}`;
}

function section(r: ApplyResult, change: PlannedChange | undefined, where: string): string {
  const lines = change ? changeLines(change).map((l) => `${l.mark} ${l.text}`) : [];
  if (r.message && r.outcome !== "converged") lines.push(`! ${r.outcome}: ${r.message}`);
  if (r.verify?.answer) lines.push(`  verify answered: ${JSON.stringify(r.verify.answer)}`);
  if (r.verify?.checks) lines.push(`  checks: ${formatChecksLine(r.verify.checks)}`);
  for (const f of r.verify?.checks?.failures ?? []) lines.push(`! check ${f.case}: ${f.reason}`);
  if (r.verify?.code) lines.push(`! [${r.verify.code}]`);
  for (const [i, line] of lines.entries()) lines[i] = cutLine(escapeControls(line)); // a CI log shows this too
  const fence = "`".repeat(
    Math.max(
      3,
      ...lines.map((l) => (l.match(/`+/g) ?? []).reduce((n, run) => Math.max(n, run.length + 1), 0)),
    ),
  );
  const label = change ? headline(change).label : r.action;
  return [
    `<details><summary>${ICON[r.outcome]} ${r.outcome}: ${r.kind} ${htmlCode(r.name)} — ${label} (${htmlCode(where)})</summary>`,
    "",
    `${fence}diff`,
    ...lines,
    fence,
    "",
    "</details>",
  ].join("\n");
}

export function formatApplyMarkdown(
  report: ApplyReport,
  plan: Plan,
  options: { elapsedMs: number; context?: ReportContext; pruned?: readonly PruneResult[]; limit?: number },
): string {
  const limit = options.limit ?? MARKDOWN_LIMIT;
  const changes = new Map(plan.changes.map((c) => [`${c.kind}/${c.name}`, c]));
  const where = (r: ApplyResult) => {
    const change = changes.get(`${r.kind}/${r.name}`);
    if (!change) return "—";
    return `${options.context ? options.context.repositoryPath(change.file) : change.file}:${change.line}`;
  };
  const pruned = options.pruned ?? [];
  const shown = OUTCOMES.filter((o) => report.summary[o] > 0);
  const head = [
    APPLY_COMMENT_MARKER,
    `### plumb apply: ${report.ok ? "✅ converged" : "❌ did not converge"}`,
    "",
    ...(options.context ? [formatContextLine(options.context), ""] : []),
    `${count(report.results.length, "object")} in ${seconds(options.elapsedMs)}.`,
    "",
    ...(shown.length > 0
      ? [
          `| ${shown.map((o) => `${ICON[o]} ${o}`).join(" | ")} |`,
          `|${shown.map(() => "---:").join("|")}|`,
          `| ${shown.map((o) => report.summary[o]).join(" | ")} |`,
          "",
        ]
      : ["Nothing to apply: live matched the manifests.", ""]),
    ...linesWithin(
      pruned.map(
        (p) =>
          `- ${p.outcome === "deleted" ? "🗑️ deleted" : "❌ not deleted"} Deployment ${markdownCode(p.name, false)}: ${markdownText(p.message)}`,
      ),
      limit / 2,
      (left) => `- … and ${count(left, "more deletion")}: the job log has every line`,
    ),
    ...(pruned.length > 0 ? [""] : []),
  ];
  if (report.results.length === 0) return head.join("\n");
  const table = [
    "| | Kind | Name | File | Revision | Verify | Time |",
    "|---|---|---|---|---|---|---|",
    ...report.results.map(
      (r) =>
        `| ${ICON[r.outcome]} ${r.outcome} | ${markdownText(r.kind)} | ${markdownCode(r.name)} | ${markdownCode(where(r))} | ${r.revision_id ? `${markdownCode(r.revision_id)} ${markdownText(r.revision_status ?? "")}`.trimEnd() : "—"} | ${verifyCell(r)} | ${seconds(r.elapsed_ms)} |`,
    ),
    "",
  ];
  const note = (left: number) =>
    `\n> **Truncated:** ${count(left, "more object")} not detailed to stay under the comment size limit; the job log has every line.\n`;
  let out = [...head, ...table].join("\n");
  if (out.length + note(report.results.length).length > limit)
    return [...head, note(report.results.length)].join("\n");
  // Failures first: they are what a reviewer must read.
  const ordered = [...report.results].sort(
    (a, b) =>
      Number(a.outcome === "converged" || a.outcome === "accepted") -
      Number(b.outcome === "converged" || b.outcome === "accepted"),
  );
  for (const [index, r] of ordered.entries()) {
    const text = `\n${section(r, changes.get(`${r.kind}/${r.name}`), where(r))}\n`;
    const reserve = index + 1 < ordered.length ? note(ordered.length - index - 1).length : 0;
    if (out.length + text.length + reserve > limit) return out + note(ordered.length - index);
    out += text;
  }
  return out;
}
