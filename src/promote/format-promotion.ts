import { escapeControls } from "../manifest/format/format.js";
import type { PromotionItem, PromotionOutcome } from "./decide.js";

// A promotion's report as text (per deployment: promoted, blocked with the reasons, already at
// that version, in git but not running it yet), as JSON, and as the commit message of promote
// --branch (the evidence). Pure. Every value in them is a control plane's answer or a record's
// (a revision's version, id and dates, a checks record): each line is written with its control
// characters escaped, so a value cannot move the terminal's cursor or start a line of its own
// (a CI workflow command such as ::add-mask::, a forged line of evidence in the commit message).

export type PromotionReport = {
  from: string;
  to: string;
  /** "dry-run": nothing written; "write": the files were edited; "branch": committed on `branch`. */
  mode: "dry-run" | "write" | "branch";
  branch?: string;
  commit?: string;
  /** The unified diff of the files changed (or, in a dry run, that would be). */
  diff?: string;
  /** True when every deployment is promoted, current or in-git (else nothing was written). */
  ok: boolean;
  items: PromotionItem[];
};

const WORDS: Record<PromotionOutcome, string> = {
  promoted: "promoted",
  current: "already at that version",
  "in-git": "at that version in git, not running it yet",
  blocked: "blocked",
  unpinned: "unpinned",
};

const show = (value: unknown) =>
  value === null || value === undefined
    ? "(unset)"
    : typeof value === "string"
      ? value
      : JSON.stringify(value);

/** Where the version comes from: environment, deployment, revision, when deployed, what was built. */
function sourceLine(item: PromotionItem): string {
  const e = item.evidence;
  const revision = e.revision_id ? `revision ${e.revision_id} (${show(e.revision_status)})` : "no revision";
  const parts = [`from ${e.environment} ${e.deployment}, ${revision}`];
  if (e.deployed_at) parts.push(`deployed at ${e.deployed_at}`);
  if (e.repo_commit_sha) parts.push(`commit ${e.repo_commit_sha}`);
  if (e.source_digest) parts.push(`source ${e.source_digest}`);
  return parts.join(", ");
}

const gateLine = (g: PromotionItem["gates"][number]) => `${g.gate} ${g.ok ? "holds" : "fails"}: ${g.detail}`;

/** The reasons that are not a failed gate's (shown with the gates): unpinned, unlike sources. */
const otherReasons = (item: PromotionItem) =>
  item.reasons.filter((r) => !item.gates.some((g) => !g.ok && r === `${g.gate}: ${g.detail}`));

export function formatPromotionText(report: PromotionReport, wouldWrite: boolean): string {
  const lines = [`promote ${report.from} → ${report.to}`];
  for (const item of report.items) {
    const word =
      item.outcome !== "promoted"
        ? WORDS[item.outcome]
        : !report.ok
          ? "ready, not written (another deployment is not)"
          : wouldWrite
            ? "would be promoted"
            : WORDS.promoted;
    lines.push(`  ${item.name}: ${word}`);
    for (const f of item.fields) lines.push(`      ${f.field}: ${show(f.from)} → ${f.to}`);
    for (const r of otherReasons(item)) lines.push(`      ! ${r}`);
    for (const g of item.gates) lines.push(`      ${g.ok ? "✓" : "✗"} ${gateLine(g)}`);
    lines.push(`      ${sourceLine(item)}`);
  }
  const counts = (o: PromotionOutcome) => report.items.filter((i) => i.outcome === o).length;
  const written = counts("in-git") ? `, ${counts("in-git")} in git not applied yet` : "";
  const summary = `${counts("promoted")} to promote, ${counts("current")} already at that version${written}, ${counts("blocked")} blocked, ${counts("unpinned")} unpinned`;
  lines.push("", summary);
  return `${lines.map(escapeControls).join("\n")}\n`;
}

export function formatPromotionJson(report: PromotionReport): string {
  const items = report.items.map(({ edits: _edits, ...item }) => item);
  return `${JSON.stringify({ format_version: "1", ...report, items }, null, 2)}\n`;
}

/** promote --branch's commit message: what changed and the evidence it rests on. */
export function formatCommitMessage(report: PromotionReport): string {
  const promoted = report.items.filter((i) => i.outcome === "promoted");
  const title = `plumb: promote ${report.from} to ${report.to} (${promoted.map((i) => i.name).join(", ")})`;
  const body = promoted.map((item) =>
    [
      ...item.fields.map((f) => `${item.name} ${f.field}: ${show(f.from)} -> ${f.to}`),
      `  ${sourceLine(item)}`,
      ...item.gates.map((g) => `  ${gateLine(g)}`),
    ]
      .map(escapeControls)
      .join("\n"),
  );
  return `${escapeControls(title)}\n\n${body.join("\n\n")}\n`;
}
