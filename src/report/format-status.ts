import { createColors } from "picocolors";
import { checksRecordInvalid } from "../status/checks/checks-record-problems.js";
import type { ObjectStatus } from "../status/status-types.js";
import { escapeControls } from "../errors.js";

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length));

/**
 * `8/9 p95 1290ms`: the agent's checks of the active revision; `-` when none ran on it; `record
 * invalid: …` (escaped, cut) when the record contradicts itself.
 */
function checksCell(s: ObjectStatus): string {
  const checks = s.checks;
  if (!checks || checks.revision_id !== s.active_revision_id) return "-";
  const invalid = checksRecordInvalid(checks);
  if (invalid) return `record invalid: ${invalid}`;
  return `${checks.passed}/${checks.runs} p95 ${checks.latency_ms.p95}ms`;
}

/** `plumb status` text: one row per object (sync, health, revisions, when, last error). */
export function formatStatusText(
  records: readonly ObjectStatus[],
  options: { color?: boolean } = {},
): string {
  const c = createColors(options.color ?? false);
  if (records.length === 0) return "No status recorded yet: run plumb apply.\n";
  const rows = [...records]
    .sort((a, b) => (a.kind + a.name < b.kind + b.name ? -1 : 1))
    .map((s) =>
      [
        `${s.kind}/${s.name}`,
        s.sync,
        s.health,
        s.revision_status ?? "-",
        s.active_revision_id === s.latest_revision_id
          ? (s.active_revision_id ?? "-")
          : `${s.active_revision_id ?? "-"} → ${s.latest_revision_id ?? "-"}`,
        checksCell(s),
        s.updated_at,
        s.last_error ?? "",
      ].map(escapeControls),
    ); // ids and errors are a server's (or a status branch's) text
  const header = [
    "OBJECT",
    "SYNC",
    "HEALTH",
    "REVISION",
    "ACTIVE → LATEST",
    "CHECKS",
    "UPDATED",
    "LAST ERROR",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const paint = (value: string) =>
    ["Synced", "Healthy"].includes(value)
      ? c.green(value)
      : ["Failed", "Refused", "Degraded"].includes(value)
        ? c.red(value)
        : ["OutOfSync", "Progressing"].includes(value)
          ? c.yellow(value)
          : value;
  const line = (cells: string[], color: boolean) =>
    cells
      .map((cell, i) => {
        const padded = i === cells.length - 1 ? cell : pad(cell, widths[i] ?? 0);
        return color ? padded.replace(cell, paint(cell)) : padded;
      })
      .join("  ")
      .trimEnd();
  return [c.bold(line(header, false)), ...rows.map((r) => line(r, true))].join("\n") + "\n";
}

/** `plumb status --output json`: the records as stored (fingerprints included, never a value). */
export const formatStatusJson = (records: readonly ObjectStatus[]): string =>
  `${JSON.stringify({ format_version: "1", objects: records }, null, 2)}\n`;
