import { createColors } from "picocolors";
import { changeLines, headline, type Mark, pruneLine, shownChanges, summaryLine } from "./format-lines.js";
import type { Plan } from "../diff/plan/plan-types.js";
import { escapeControls } from "../errors.js";

export type TextFormatOptions = {
  /** Decided once at the edge: a TTY and no NO_COLOR. */
  color?: boolean;
};

/** Terraform-like text: one block per change, field-level old → new, secrets by name only. */
export function formatPlanText(plan: Plan, options: TextFormatOptions = {}): string {
  const c = createColors(options.color ?? false);
  const paint: Record<Mark, (text: string) => string> = {
    "+": c.green,
    "-": c.red,
    "~": c.yellow,
    "±": c.magenta,
    "!": c.red,
    "=": c.dim,
  };
  const blocks: string[] = [];
  for (const change of shownChanges(plan.changes)) {
    const { mark, label } = headline(change);
    const where = c.dim(`${change.file}:${change.line}`);
    const lines = [`${paint[mark](`${mark} ${label}`)} ${change.kind} ${c.bold(change.name)}  ${where}`];
    if (change.request)
      lines.push(c.dim(escapeControls(`    ${change.request.method} ${change.request.path}`)));
    for (const line of changeLines(change)) lines.push(`    ${paint[line.mark](line.mark)} ${line.text}`);
    blocks.push(lines.join("\n"));
  }
  for (const p of plan.prune ?? []) {
    const { mark } = pruneLine(p);
    const text = escapeControls(pruneLine(p).text); // its id is the server's
    blocks.push(`${paint[mark](mark)} ${mark === "-" && p.action === "delete" ? c.bold(text) : text}`);
  }
  const total =
    plan.summary.create +
    plan.summary.update +
    plan.summary.refused +
    (plan.summary.delete ?? 0) +
    (plan.summary.orphan ?? 0);
  const footer =
    total === 0
      ? `No changes: live matches the manifests (${plan.summary.noop} unchanged).`
      : summaryLine(plan);
  return [...blocks, c.bold(footer)].join("\n\n") + "\n";
}
