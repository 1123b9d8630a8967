import { changeLines, headline, notPlannedCount, pruneLine, shownChanges } from "../format-lines.js";
import type { Plan, PlannedChange, PlannedPrune } from "../../diff/plan/plan-types.js";
import { count } from "../plural.js";
import { formatContextLine, type ReportContext } from "../report-context.js";
import { cutLine, htmlCode, linesWithin, markdownCode, markdownText } from "./markdown-text.js";
import { escapeControls } from "../../errors.js";

/** First line of every plan comment: CI scripts find their earlier comment by it and edit it. */
export const PLAN_COMMENT_MARKER = "<!-- plumb plan -->";

/** GitHub refuses comments over 65,536 characters; stay clear of it. */
export const MARKDOWN_LIMIT = 65_000;

function fieldsOf(change: PlannedChange): string {
  if (change.action === "create") return "(new)";
  if (change.action === "refused") return change.errors.map((e) => e.field || "—").join(", ");
  return [...change.revision_fields, ...change.in_place_fields].join(", ") || "—";
}

function details(change: PlannedChange, where: (change: PlannedChange) => string): string {
  const { mark, label } = headline(change);
  const body = changeLines(change).map((line) => cutLine(`${line.mark} ${line.text}`));
  if (change.request) body.unshift(escapeControls(`  ${change.request.method} ${change.request.path}`));
  // Fence longer than any backtick run inside, so a value cannot close it.
  const fence = "`".repeat(
    Math.max(3, ...body.map((l) => (l.match(/`+/g) ?? []).reduce((n, r) => Math.max(n, r.length + 1), 0))),
  );
  return [
    `<details><summary>${mark} ${label}: ${change.kind} ${htmlCode(change.name)} (${htmlCode(where(change))})</summary>`,
    "",
    `${fence}diff`,
    ...body,
    fence,
    "",
    "</details>",
  ].join("\n");
}

/** A removed object as a list item: its name as code, the rest (an id, a reason) as text. */
function pruneItem(p: PlannedPrune): string {
  const text = pruneLine(p).text;
  const at = text.indexOf(p.name);
  if (at < 0) return `- ${markdownText(text)}`;
  const after = text.slice(at + p.name.length);
  return `- ${markdownText(text.slice(0, at))}${markdownCode(p.name, false)}${markdownText(after)}`;
}

const pruneNote = (left: number) =>
  `- … and ${count(left, "more object")} removed from git: \`plumb plan\` lists them all`;

/** A pull-request comment: summary table first, one collapsible section per change, under 65,000 characters. */
export function formatPlanMarkdown(plan: Plan, limit = MARKDOWN_LIMIT, context?: ReportContext): string {
  const where = (change: PlannedChange) =>
    `${context ? context.repositoryPath(change.file) : change.file}:${change.line}`;
  const { summary } = plan;
  const shown = shownChanges(plan.changes);
  // Changes not planned because of an error get their own column (only when there are some).
  const errors = notPlannedCount(plan.changes);
  const prune = plan.prune ?? [];
  const pruneHead = prune.length > 0 ? " Delete | Removed from git (kept) |" : "";
  const pruneCells = prune.length > 0 ? ` ${summary.delete ?? 0} | ${summary.orphan ?? 0} |` : "";
  const head = [
    PLAN_COMMENT_MARKER,
    "### plumb plan",
    "",
    ...(context ? [formatContextLine(context), ""] : []),
    `| Create | Update | Refused |${errors ? " Not planned (errors) |" : ""}${pruneHead} Unchanged |`,
    `|---:|---:|---:|${errors ? "---:|" : ""}${prune.length > 0 ? "---:|---:|" : ""}---:|`,
    `| ${summary.create} | ${summary.update} | ${summary.refused - errors} |${errors ? ` ${errors} |` : ""}${pruneCells} ${summary.noop} |`,
    "",
    // Managed objects whose manifests were removed: a reviewer sees what apply --prune would delete.
    ...linesWithin(prune.map(pruneItem), limit / 2, pruneNote),
    ...(prune.length > 0 ? [""] : []),
  ];
  if (shown.length === 0)
    return [...head, prune.length > 0 ? "" : "No changes: live matches the manifests.", ""].join("\n");
  const table = [
    "| | Kind | Name | File | Fields |",
    "|---|---|---|---|---|",
    ...shown.map((change) => {
      const { mark, label } = headline(change);
      return `| ${mark} ${label} | ${markdownText(change.kind)} | ${markdownCode(change.name)} | ${markdownCode(where(change))} | ${markdownText(fieldsOf(change))} |`;
    }),
    "",
  ];
  const note = (left: number) =>
    `\n> **Truncated:** ${count(left, "more change", "more changes")} not shown to stay under the comment size limit. Run \`plumb plan\` for the full plan.\n`;
  let out = [...head, ...table].join("\n");
  if (out.length + note(shown.length).length > limit) {
    // Even the table is too long: keep the counts and say so.
    return [...head, note(shown.length)].join("\n");
  }
  for (const [index, change] of shown.entries()) {
    const section = `\n${details(change, where)}\n`;
    const reserve = index + 1 < shown.length ? note(shown.length - index - 1).length : 0;
    if (out.length + section.length + reserve > limit) return out + note(shown.length - index);
    out += section;
  }
  return out;
}
