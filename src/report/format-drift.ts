import { createColors } from "picocolors";
import { changeLines } from "./format-lines.js";
import { escapeControls } from "../manifest/format/format.js";
import { MARKDOWN_LIMIT } from "./markdown/format-markdown.js";
import { redactChange } from "../diff/secrets/redact.js";
import type { DriftItem, DriftReason, DriftReport } from "../reconcile/drift.js";
import { count } from "./plural.js";
import { cutLine, htmlCode, linesWithin, markdownCode, markdownText } from "./markdown/markdown-text.js";

const REASON_TEXT: Record<DriftReason, string> = {
  differs: "live differs from git",
  refused: "live differs from git in a field that cannot change",
  missing: "in git, not on the control plane",
  vanished: "applied before, now gone from the control plane",
  "removed-from-git": "managed by plumb, removed from git, still live",
};

/** What a pending object is: git moved since the last apply, live did not. */
const PENDING_TEXT = "git changed since the last apply; run plumb apply";

const ORIGIN_TEXT: Record<DriftItem["origin"], string> = {
  change: "pending",
  drift: "drift",
  conflict: "conflict: git and live both changed since the last apply",
  unknown: "unknown base: not known whether git or live changed",
};

const where = (item: DriftItem) => (item.file ? `${item.file}:${item.line}` : "(not in git)");
const pendingOf = (report: DriftReport) => report.items.filter((i) => i.origin === "change");
const driftedOf = (report: DriftReport) => report.items.filter((i) => i.origin !== "change");

/** "live differs from git (drift)"; a pending object says what to run. */
const itemText = (item: DriftItem) =>
  item.origin === "change"
    ? `${REASON_TEXT[item.reason]} (pending: ${PENDING_TEXT}${item.reason === "removed-from-git" ? " --prune" : ""})`
    : `${REASON_TEXT[item.reason]} (${ORIGIN_TEXT[item.origin]})`;

/**
 * The summary line. When an error stopped some plans it says first that their drift is unknown, and
 * never "No drift" for the whole: "1 object not checked (errors above); No drift: 1 object matches
 * git." read as a clean run in a log or a pull-request comment.
 */
function summaryText(report: DriftReport): string {
  const unchecked = report.not_checked.length;
  if (unchecked === 0) return driftSummary(report);
  const head = `${count(unchecked, "object")} not checked (errors above)`;
  if (report.drifted) return `${head}; ${driftSummary(report)}`;
  if (report.summary.in_sync + report.items.length === 0) return `Drift unknown: ${head}; none was checked.`;
  return `Drift unknown: ${head}; of those checked, ${driftSummary(report).replace(/^No drift: /, "no drift: ")}`;
}

function driftSummary(report: DriftReport): string {
  const matching = `${count(report.summary.in_sync, "object")} ${report.summary.in_sync === 1 ? "matches" : "match"} git`;
  const pending = report.summary.pending;
  const pendingText = pending > 0 ? `${count(pending, "object")} pending (${PENDING_TEXT})` : "";
  if (!report.drifted) return `No drift: ${[matching, pendingText].filter(Boolean).join("; ")}.`;
  const drifted = driftedOf(report);
  const parts = (Object.keys(REASON_TEXT) as DriftReason[])
    .map((r) => [r, drifted.filter((i) => i.reason === r).length] as const)
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${n} ${r}`);
  const tail = [pendingText, `${report.summary.in_sync} in sync`].filter(Boolean).join("; ");
  return `Drift: ${count(drifted.length, "object")} (${parts.join(", ")}); ${tail}.`;
}

function itemBlock(item: DriftItem, c: ReturnType<typeof createColors>): string {
  const mark = item.origin === "change" ? c.cyan("→") : c.yellow("≠");
  // A removed object's name is a status record's (a status branch's): printed escaped.
  const name = escapeControls(item.name);
  const lines = [
    `${mark} ${item.kind} ${c.bold(name)}: ${itemText(item)}  ${c.dim(escapeControls(where(item)))}`,
  ];
  if (item.change) for (const line of changeLines(item.change)) lines.push(`    ${line.mark} ${line.text}`);
  return lines.join("\n");
}

/**
 * Text: one block per drifted object, the live → git values as plan shows them, secrets by name
 * only; then the pending objects under their own heading (git moved, not drift).
 */
export function formatDriftText(report: DriftReport, options: { color?: boolean } = {}): string {
  const c = createColors(options.color ?? false);
  const blocks = report.not_checked.map((n) =>
    [
      `${c.red("!")} ${n.kind} ${c.bold(escapeControls(n.name))}: not checked, an error stopped its plan  ${c.dim(n.file ? `${n.file}:${n.line}` : "(not in git)")}`,
      ...n.errors.map((e) => `    ! error: ${escapeControls(e)}`),
    ].join("\n"),
  );
  blocks.push(...driftedOf(report).map((item) => itemBlock(item, c)));
  const pending = pendingOf(report);
  if (pending.length > 0)
    blocks.push([`Pending (${PENDING_TEXT}):`, ...pending.map((item) => itemBlock(item, c))].join("\n\n"));
  return [...blocks, c.bold(summaryText(report))].join("\n\n") + "\n";
}

/** JSON (format_version "1"): the items with their plan change, every secret value redacted. */
export function formatDriftJson(report: DriftReport): string {
  const items = report.items.map((item) => ({
    ...item,
    change: item.change ? redactChange(item.change) : null,
  }));
  return `${JSON.stringify({ ...report, items }, null, 2)}\n`;
}

/**
 * Markdown for an issue or pull-request comment: a table, then the field diffs; under 65,000
 * characters (rows past half of it are cut with a note, then the diffs as they fit). Names, files,
 * fields and errors (a server's words) are text or code, never markup (markdown-text.ts).
 */
export function formatDriftMarkdown(report: DriftReport, limit = MARKDOWN_LIMIT): string {
  const head = [`### plumb drift`, "", markdownText(summaryText(report))];
  if (report.in_sync) return `${head.join("\n")}\n`;
  head.push("", "| Object | Drift | Fields | Manifest |", "|---|---|---|---|");
  const rows = report.not_checked.map(
    (n) =>
      `| ${markdownText(n.kind)} ${markdownCode(n.name)} | not checked: ${markdownText(cutLine(n.errors.join("; ")))} | — | ${markdownCode(n.file ? `${n.file}:${n.line}` : "(not in git)")} |`,
  );
  const ordered = [...driftedOf(report), ...pendingOf(report)];
  for (const item of ordered) {
    rows.push(
      `| ${markdownText(item.kind)} ${markdownCode(item.name)} | ${markdownText(itemText(item))} | ${markdownText(item.fields.join(", ") || "—")} | ${markdownCode(where(item))} |`,
    );
  }
  const rowsNote = (left: number) =>
    `\n_Truncated: ${count(left, "more object")} not shown; run \`plumb drift\` for the full report._`;
  let out = [...head, ...linesWithin(rows, limit / 2, rowsNote)].join("\n");
  for (const item of ordered) {
    if (!item.change) continue;
    const body = changeLines(item.change).map((l) => cutLine(`${l.mark} ${l.text}`));
    const section = `\n\n<details><summary>${item.kind} ${htmlCode(item.name)}</summary>\n\n\`\`\`\`diff\n${body.join("\n")}\n\`\`\`\`\n\n</details>`;
    if (out.length + section.length > limit - 200) {
      out += "\n\n_Truncated: run `plumb drift` for the full report._";
      break;
    }
    out += section;
  }
  return `${out}\n`;
}
