import { readFile } from "node:fs/promises";
import { type FileReplacement, replaceFilesText, replaceFileText } from "../manifest/write/replace-file.js";
import { join } from "node:path";
import { type FieldOrigin, SOURCE_TARBALL_FIELD } from "../diff/plan/plan-types.js";
import { fileError, PlumbError } from "../errors.js";
import { editValues, type ValueEdit } from "../manifest/write/edit-values.js";
import type { DriftReport } from "./drift.js";
import { editForEnvironment, type EnvironmentWrite } from "./drift-write-environment.js";
import { liveHeldSecret } from "./plan/live-secrets.js";

// drift --write: turn a change made in the UI into a change of the YAML. Every drifted field the
// manifest manages and plumb can write (in-place and revision fields) is set to its live value,
// in place (edit-values.ts keeps every other byte); secrets, immutable fields and the uploaded
// source stay reported only, and so does every field that is not drift (a change in git not
// applied yet, or a conflict).

export type WrittenField = {
  file: string;
  line: number;
  name: string;
  field: string;
  from: unknown;
  to: unknown;
  /** With environments: the YAML path written (environments.ENV.spec.… or spec.…). */
  into?: string;
};
export type KeptField = { file: string; name: string; field: string; reason: string };

type DriftEdit = ValueEdit & { from: unknown };
type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/**
 * Only drift is written back (the three-way model, src/diff/three-way.ts): a change in git that
 * is not applied yet, or a conflict, never is. An object whose record says nothing of what was
 * last applied cannot tell which side moved, so nothing of it is written either.
 */
function originReason(origin: FieldOrigin | undefined): string | null {
  if (origin === "drift") return null; // the only origin ever written back
  if (origin === "change") return "a change in git not applied yet (plumb apply sends it), not drift";
  if (origin === "conflict")
    return "a conflict: git and live both changed since plumb last applied; choose the value by hand";
  if (origin === "unknown")
    return "unknown base: the record is older than applied_spec and git changed since that apply, so it is not known whether git or live changed (plumb apply records it)";
  return "not known whether git or live changed: no record of what plumb last applied (plumb apply records it)";
}

/** The edits a drift report asks for, and the fields that stay reported (with why). */
export function planDriftEdits(report: DriftReport): { edits: Map<string, DriftEdit[]>; kept: KeptField[] } {
  const edits = new Map<string, DriftEdit[]>();
  const kept: KeptField[] = [];
  for (const item of report.items) {
    if (item.reason !== "differs" || !item.change || !item.file) continue;
    for (const f of item.change.fields ?? []) {
      const keep = (reason: string) =>
        kept.push({ file: item.file!, name: item.name, field: f.field, reason });
      const unwritable = originReason(f.origin);
      if (unwritable) keep(unwritable);
      else if (f.sensitive) keep("a secret: its live value cannot be read back");
      else if (liveHeldSecret(f))
        keep("live holds a secret plumb was given (shown redacted): it is never written to git");
      else if (f.class === "immutable") keep("immutable: cannot change live either");
      else if (f.field === SOURCE_TARBALL_FIELD) keep("the uploaded source: change spec.source_path's files");
      else if (!isScalar(f.old)) keep("live has no single value here; edit the manifest by hand");
      else {
        const path = item.kind === "Deployment" ? ["spec", ...f.field.split(".")] : ["spec", f.field];
        const list = edits.get(item.file) ?? [];
        list.push({ kind: item.kind, name: item.name, path, value: f.old, from: f.new });
        edits.set(item.file, list);
      }
    }
  }
  return { edits, kept };
}

/**
 * Writes the edits into the manifest files under `root`; returns what it wrote and what it could
 * not. Every file's new text is computed first, then all are written or none, and only over the
 * text read (replaceFilesText: an edit saved meanwhile refuses the write, manifest-changed).
 * `afterRead` runs between the reads and the write (tests change a file there).
 */
export async function writeDriftEdits(
  root: string,
  report: DriftReport,
  /** With environments: the environment drift checked (drift-write-environment.ts). */
  environment?: EnvironmentWrite,
  afterRead?: () => Promise<void>,
): Promise<{ written: WrittenField[]; kept: KeptField[] }> {
  const { edits, kept } = planDriftEdits(report);
  const written: WrittenField[] = [];
  const files: FileReplacement[] = [];
  const othersBefore = environment && edits.size > 0 ? await environment.renderOthers() : undefined;
  for (const [file, list] of edits) {
    const path = join(root, file);
    const before = await readFile(path, "utf8").catch((error: unknown) => {
      throw fileError(
        "manifest-unreadable",
        path,
        error,
        "drift --write edits the manifest files under PATH",
      );
    });
    const { text, outcomes } = environment
      ? fromEnvironment(before, list, environment, file)
      : fromPlain(before, list, file);
    for (const o of outcomes) {
      const { edit } = o;
      const field = edit.path.slice(1).join(".");
      if (!o.written) kept.push({ file, name: edit.name, field, reason: o.reason ?? "not written" });
      else
        written.push({
          file,
          line: o.line,
          name: edit.name,
          field,
          from: edit.from,
          to: edit.value,
          ...(o.into ? { into: o.into } : {}),
        });
    }
    if (text !== before) files.push({ path, before, after: text });
  }
  await afterRead?.();
  await replaceFilesText(files, "drift --write");
  if (othersBefore !== undefined && (await environment!.renderOthers()) !== othersBefore) {
    // Each file back to what it was, unless saved again meanwhile (that edit is kept).
    for (const f of files) await replaceFileText(f.path, f.before, f.after);
    throw new PlumbError(
      "drift-write-unsafe",
      `drift --write --env ${environment!.environment} would have changed another environment's resolved manifests; every file was restored, nothing written. Write the live values into environments.${environment!.environment}.spec by hand`,
    );
  }
  return { written, kept };
}

type Outcome = { edit: DriftEdit; written: boolean; line: number; reason?: string; into?: string };

function fromPlain(
  text: string,
  list: readonly DriftEdit[],
  file: string,
): { text: string; outcomes: Outcome[] } {
  const result = editValues(text, list, file);
  return {
    text: result.text,
    outcomes: result.outcomes.map((o) => ({ ...o, edit: o.edit as DriftEdit })),
  };
}

function fromEnvironment(
  text: string,
  list: readonly DriftEdit[],
  environment: EnvironmentWrite,
  file: string,
): { text: string; outcomes: Outcome[] } {
  const edits = list.map((e) => ({
    ...e,
    path: e.path.map(String),
    value: e.value as string | number | boolean,
  }));
  const result = editForEnvironment(text, edits, environment, file);
  return { text: result.text, outcomes: result.outcomes.map((o) => ({ ...o, edit: list[o.index]! })) };
}
