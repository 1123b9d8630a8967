import { formatChangeError } from "../diff/plan/change-error.js";
import { describeUpload, describeUploadContents } from "../diff/diff-source.js";
import {
  type FieldChange,
  type Plan,
  type PlannedChange,
  type PlannedPrune,
  type PlannedUpload,
  SOURCE_TARBALL_FIELD,
} from "../diff/plan/plan-types.js";
import { redactChange } from "../diff/secrets/redact.js";
import { isObject, type JsonObject } from "../diff/values.js";
import { escapeControls } from "../manifest/format/format.js";

// What the text and Markdown formatters share: the headline and the field lines of one change.
// Secret values never reach a line: secrets are shown by name only.

export type Mark = "+" | "-" | "~" | "±" | "!" | "=";
export type Line = { mark: Mark; text: string };

export function headline(change: PlannedChange): { mark: Mark; label: string } {
  switch (change.action) {
    case "create":
      return change.replaces ? { mark: "!", label: "-/+ replace" } : { mark: "+", label: "create" };
    case "refused":
      return change.not_planned
        ? { mark: "!", label: "not planned (error)" }
        : { mark: "!", label: "refused" };
    case "noop":
      return { mark: "=", label: "no changes" };
    case "update":
      return change.new_revision
        ? { mark: "±", label: "new revision" }
        : { mark: "~", label: "update in place" };
  }
}

const show = (value: unknown) => (value === undefined || value === null ? "null" : JSON.stringify(value));
const names = (value: unknown) => (Array.isArray(value) ? value.join(", ") : "");

/** The three-way origin of a field (src/diff/three-way.ts); a change in git, the usual case, says nothing. */
const ORIGIN_NOTE = {
  change: "",
  drift: " (drift: changed outside plumb since its last apply)",
  conflict: " (conflict: git and live both changed since plumb's last apply)",
  unknown: " (unknown base: the record does not say what plumb last applied; plumb apply records it)",
} as const;

function fieldLine(field: FieldChange, changedSecrets: readonly string[], upload?: PlannedUpload): Line {
  const line = fieldText(field, changedSecrets, upload);
  return field.origin ? { ...line, text: line.text + ORIGIN_NOTE[field.origin] } : line;
}

function fieldText(field: FieldChange, changedSecrets: readonly string[], upload?: PlannedUpload): Line {
  // The object path is issued at apply time: the line says what content is uploaded and why.
  if (field.field === SOURCE_TARBALL_FIELD && upload)
    return { mark: "±", text: `${field.field}: ${describeUpload(upload)}` };
  if (field.sensitive) {
    const before = new Set(Array.isArray(field.old) ? (field.old as string[]) : []);
    const after = Array.isArray(field.new) ? (field.new as string[]) : [];
    const parts = [
      ...after.filter((n) => !before.has(n)).map((n) => `+${n}`),
      ...[...before].filter((n) => !after.includes(n)).map((n) => `-${n}`),
      ...changedSecrets.filter((n) => before.has(n)),
    ];
    return { mark: "±", text: `${field.field}: ${parts.join(", ") || names(after)} (sensitive, changed)` };
  }
  const mark: Mark = field.class === "immutable" ? "!" : field.class === "revision" ? "±" : "~";
  return { mark, text: `${field.field}: ${show(field.old)} → ${show(field.new)}` };
}

/** Leaf fields of a create body as dotted paths (arrays and resource_spec sub-objects shown whole). */
function flatten(object: JsonObject, prefix = ""): Line[] {
  const lines: Line[] = [];
  for (const [key, value] of Object.entries(object)) {
    const path = `${prefix}${key}`;
    if (path === "secrets") {
      const list = (value as { name: string }[]).map((s) => s.name);
      if (list.length > 0) lines.push({ mark: "+", text: `secrets: ${list.join(", ")} (sensitive)` });
    } else if (isObject(value) && (prefix === "" || path === "source_config.resource_spec")) {
      lines.push(...flatten(value, `${path}.`));
    } else lines.push({ mark: "+", text: `${path}: ${show(value)}` });
  }
  return lines;
}

/**
 * The lines under a change's headline: fields, errors, warnings and effect; each one line of
 * printable text (an error may quote a manifest's path with a line break in it).
 */
export function changeLines(plain: PlannedChange): Line[] {
  return linesOf(plain).map((line) => ({ ...line, text: escapeControls(line.text) }));
}

function linesOf(plain: PlannedChange): Line[] {
  const change = redactChange(plain);
  const lines: Line[] = [];
  if (change.action === "create" && change.request) {
    lines.push(...flatten(change.request.body).filter((line) => !line.text.startsWith("name:")));
    if (change.upload)
      lines.push({ mark: "+", text: `${SOURCE_TARBALL_FIELD}: ${describeUpload(change.upload)}` });
  } else {
    for (const field of change.fields ?? []) {
      if (field.class !== "immutable") lines.push(fieldLine(field, change.changed_secrets, change.upload));
    }
  }
  const contents = change.upload && change.action !== "refused" && describeUploadContents(change.upload);
  if (contents) lines.push({ mark: "+", text: contents });
  for (const error of change.errors) lines.push({ mark: "!", text: `error: ${error.message}` });
  for (const warning of change.warnings)
    lines.push({ mark: "!", text: `warning: ${formatChangeError(warning)}` });
  if (change.effect && change.action !== "noop")
    lines.push({ mark: "~", text: `after this change: ${change.effect}` });
  if (change.checks && (change.action === "create" || change.action === "update"))
    lines.push({ mark: "=", text: checksLine(change.checks) });
  return lines;
}

/** `checks after DEPLOYED: 6 runs, min_pass_ratio 0.9, max p95 2000 ms; last: 5 of 6 passed on rev…`. */
function checksLine(checks: NonNullable<PlannedChange["checks"]>): string {
  const p95 = checks.max_latency_p95_ms === null ? "" : `, max p95 ${checks.max_latency_p95_ms} ms`;
  const last = checks.last
    ? `; last: ${checks.last.passed} of ${checks.last.runs} passed, p95 ${checks.last.p95_ms} ms on ${checks.last.revision_id}`
    : checks.last_invalid
      ? `; last: checks record invalid: ${checks.last_invalid}`
      : "";
  return `checks after DEPLOYED: ${checks.runs} runs, min_pass_ratio ${checks.min_pass_ratio}${p95}${last}`;
}

/** Changes that are "refused" in JSON because of an error, not an immutable field (see not_planned). */
export const notPlannedCount = (changes: readonly PlannedChange[]): number =>
  changes.filter((c) => c.action === "refused" && c.not_planned).length;

export function summaryLine(plan: Plan): string {
  const { summary } = plan;
  const errors = notPlannedCount(plan.changes);
  const notPlanned = errors > 0 ? `, ${errors} not planned (errors)` : "";
  const pruned = summary.delete ? `, ${summary.delete} to delete` : "";
  const orphans = summary.orphan ? `, ${summary.orphan} removed from git (kept)` : "";
  return `Plan: ${summary.create} to create, ${summary.update} to update${pruned}, ${summary.refused - errors} refused${notPlanned}, ${summary.noop} unchanged${orphans}.`;
}

/** One line per managed object removed from git: kept (orphan) or deleted with --prune. */
export function pruneLine(p: PlannedPrune): { mark: "-" | "!"; text: string } {
  if (p.action === "delete" && p.kind === "Deployment" && p.deleting)
    return {
      mark: "-",
      text: `delete Deployment ${p.name} (${p.id}): removed from git; being deleted already (AWAITING_DELETE): apply sends no DELETE, it waits until it is gone`,
    };
  if (p.action === "delete")
    return { mark: "-", text: `delete Deployment ${p.name} (${p.id}): removed from git` };
  if (p.refused) return { mark: "!", text: `${p.name} removed from git (kept: ${p.refused})` };
  return { mark: "-", text: `${p.name} removed from git (kept; apply --prune deletes it)` };
}

/** Changes worth showing one by one: everything but noops without warnings. */
export const shownChanges = (changes: readonly PlannedChange[]) =>
  changes.filter((change) => change.action !== "noop" || change.warnings.length > 0);
