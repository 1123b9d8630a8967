import type { Problem } from "../types.js";

// An emptied manifest file is a mistake, never a removal: truncated to 0 bytes, only comments or
// `---`, a git-lfs pointer checked out without its content, a merge-conflict marker, or now only
// another tool's kinds. Read alone (validate), such a file is a warning saying what it holds; where
// the status store records managed objects in it, it is the error `manifest-emptied`, which stops
// prune like any invalid manifest (docs/manifests.md "Emptied files"). Pure.

const LFS_VERSION = "version https://git-lfs.github.com/spec/v1";
const LFS_OID = /^oid sha256:[0-9a-f]{64}$/m;
const CONFLICT_MARKER = /^(?:<{7}|>{7})(?: |$)/m;
const COMMENT_OR_SEPARATOR = /^\s*(?:#.*|---\s*(?:#.*)?|\.\.\.\s*)?$/;

/** CONFLICT_MARKER, tested only on a text that holds seven < or > in a row (run on every file). */
const hasConflictMarker = (text: string) =>
  (text.includes("<<<<<<<") || text.includes(">>>>>>>")) && CONFLICT_MARKER.test(text);

/** What a file without any document holds, in words; undefined when it holds something else. */
export function describeEmptiedText(text: string): string | undefined {
  if (text.trim() === "") return "is empty";
  if (text.startsWith(LFS_VERSION) && LFS_OID.test(text))
    return "is a git-lfs pointer, not the manifest (run git lfs pull, or check out without LFS)";
  if (CONFLICT_MARKER.test(text))
    return "holds a merge-conflict marker (<<<<<<< or >>>>>>>): resolve the merge";
  // Line by line: one pattern over the whole text would backtrack on a long hostile file.
  if (text.split("\n").every((line) => COMMENT_OR_SEPARATOR.test(line)))
    return "holds only comments or document separators (---)";
  return undefined;
}

/**
 * The warning for a file that yields no plumb document and holds one of the emptied shapes (a
 * conflict marker is reported even beside documents: git left the file half merged).
 */
export function emptiedTextWarning(text: string, file: string, documents: number): Problem | undefined {
  if (documents > 0 && !hasConflictMarker(text)) return undefined;
  const what = describeEmptiedText(text);
  if (what === undefined) return undefined;
  return {
    file,
    line: 1,
    column: 1,
    severity: "warning",
    code: "no-documents",
    field: "",
    message: `file ${what}; it defines no plumb document`,
  };
}

/** A managed object as the status store records it, with the file that last defined it. */
export type RecordedObject = { kind: string; name: string; manifest_file?: string | null | undefined };

/**
 * `manifest-emptied` errors: each file that still exists (`exists`) and that the status store
 * records as holding managed objects, but from which the load took no object (`definedFiles`: the
 * files of the objects loaded and of the documents refused with errors; `desired`: the status keys
 * of the objects loaded). Objects now defined elsewhere (moved)
 * are not missing and not named. `inScope` limits it to the files that were read.
 */
export function checkEmptiedFiles(
  records: Iterable<RecordedObject>,
  loaded: { definedFiles: ReadonlySet<string>; desired: ReadonlySet<string> },
  exists: (file: string) => boolean,
  inScope: (file: string) => boolean = () => true,
): Problem[] {
  const held = new Map<string, string[]>();
  for (const record of records) {
    const file = record.manifest_file;
    if (!file || loaded.desired.has(`${record.kind}/${record.name}`) || loaded.definedFiles.has(file))
      continue;
    if (!inScope(file)) continue;
    held.set(file, [...(held.get(file) ?? []), `${record.kind} ${record.name}`]);
  }
  const problems: Problem[] = [];
  for (const [file, objects] of [...held].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!exists(file)) continue; // the file was deleted: a removal
    problems.push({
      file,
      line: 1,
      column: 1,
      severity: "error",
      code: "manifest-emptied",
      field: "",
      message: `file defines no plumb object, but the status store records ${objects.sort().join(", ")} in it; an emptied file is not a removal, so nothing is pruned. Restore its content (git checkout, git lfs pull, or resolve the merge), or delete the file to remove them`,
    });
  }
  return problems;
}
