import { posix } from "node:path";
import type { FieldPath } from "../locate.js";
import type { Severity } from "../types.js";

// Helpers shared by the business rules, which read raw documents defensively.

export type Raw = Record<string, unknown>;
export const isRecord = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);
export const records = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isRecord) : []);
export const present = (v: unknown): boolean => v !== undefined && v !== null;

/** Records a problem at a field's key (default) or value. */
export type Report = (
  severity: Severity,
  code: string,
  path: FieldPath,
  message: string,
  at?: "key" | "value",
) => void;

/**
 * True when `target`, relative to the directory of manifest `file` (itself relative to the manifest
 * root), leaves the root by its text alone (absolute, or `..` past the root). Symlinks are checked
 * when the path is read (src/manifest/inside-root.ts).
 */
export function leavesRoot(file: string, target: string): boolean {
  const normalised = posix.normalize(posix.join(posix.dirname(file), target.replace(/\\/g, "/")));
  return posix.isAbsolute(target) || normalised === ".." || normalised.startsWith("../");
}

/** Reports each repeat of a name (every place after the first) at that entry's `name` value. */
export function reportDuplicateNames(
  report: Report,
  code: string,
  what: string,
  entries: ReadonlyArray<{ name: unknown; path: FieldPath }>,
): void {
  const seen = new Set<string>();
  for (const { name, path } of entries) {
    if (typeof name !== "string") continue;
    if (seen.has(name))
      report("error", code, [...path, "name"], `${what} ${name} is defined more than once`, "value");
    seen.add(name);
  }
}
