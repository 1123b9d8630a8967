import { createColors } from "picocolors";
import { changeLines } from "./format-lines.js";
import { MARKDOWN_LIMIT } from "./format-markdown.js";
import { redactChange } from "../diff/redact.js";
import type { DriftItem, DriftReason, DriftReport } from "../reconcile/drift.js";
import { count } from "./plural.js";

const REASON_TEXT: Record<DriftReason, string> = {
  differs: "live differs from git",
  refused: "live differs from git in a field that cannot change",
  missing: "in git, not on the control plane",
  vanished: "applied before, now gone from the control plane",
  "removed-from-git": "managed by plumb, removed from git, still live",
};

const where = (item: DriftItem) => (item.file ? `${item.file}:${item.line}` : "(not in git)");

function summaryText(report: DriftReport): string {
  if (report.in_sync)
    return `No drift: ${count(report.summary.in_sync, "object")} ${report.summary.in_sync === 1 ? "matches" : "match"} git.`;
  const parts = (Object.keys(REASON_TEXT) as DriftReason[])
    .filter((r) => report.summary[r] > 0)
    .map((r) => `${report.summary[r]} ${r}`);
  return `Drift: ${count(report.items.length, "object")} (${parts.join(", ")}); ${report.summary.in_sync} in sync.`;
}

/** Text: one block per drifted object, the live → git values as plan shows them, secrets by name only. */
export function formatDriftText(report: DriftReport, options: { color?: boolean } = {}): string {
  const c = createColors(options.color ?? false);
  const blocks = report.items.map((item) => {
    const lines = [
      `${c.yellow("≠")} ${item.kind} ${c.bold(item.name)}: ${REASON_TEXT[item.reason]}  ${c.dim(where(item))}`,
    ];
    if (item.change) for (const line of changeLines(item.change)) lines.push(`    ${line.mark} ${line.text}`);
    return lines.join("\n");
  });
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

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** Markdown for an issue or pull-request comment: a table, then the field diffs; under 65,000 characters. */
export function formatDriftMarkdown(report: DriftReport, limit = MARKDOWN_LIMIT): string {
  const head = [`### plumb drift`, "", summaryText(report)];
  if (report.in_sync) return `${head.join("\n")}\n`;
  head.push("", "| Object | Drift | Fields | Manifest |", "|---|---|---|---|");
  for (const item of report.items) {
    head.push(
      `| ${item.kind} \`${cell(item.name)}\` | ${REASON_TEXT[item.reason]} | ${cell(item.fields.join(", ") || "—")} | ${cell(where(item))} |`,
    );
  }
  let out = head.join("\n");
  for (const item of report.items) {
    if (!item.change) continue;
    const body = changeLines(item.change).map((l) => `${l.mark} ${l.text}`);
    const section = `\n\n<details><summary>${item.kind} ${item.name}</summary>\n\n\`\`\`\`diff\n${body.join("\n")}\n\`\`\`\`\n\n</details>`;
    if (out.length + section.length > limit - 200) {
      out += "\n\n_Truncated: run `plumb drift` for the full report._";
      break;
    }
    out += section;
  }
  return `${out}\n`;
}
