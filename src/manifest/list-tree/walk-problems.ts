import { lstatSync } from "node:fs";
import { problemAt } from "../parse/parse.js";
import type { Problem } from "../types.js";

// The problems of a tree's walk (tree-walk.ts): names it cannot show, loops, and links it does not
// follow, each as the problem the listing reports.

/** C0 and C1 control characters, DEL, and the bidirectional overrides and isolates. */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A name that cannot be shown as it is: one with a control character, or one that is not UTF-8
 * (readdir gives it with U+FFFD in place of its bytes, a name no file has: opening it failed with
 * ENOENT, and the whole command with it). A real U+FFFD in a name costs one lstat to tell apart.
 */
export function hasUnshowableName(name: string, path: string): boolean {
  if (name.search(UNPRINTABLE) !== -1) return true;
  if (!name.includes("\uFFFD")) return false;
  try {
    lstatSync(path);
    return false;
  } catch {
    return true;
  }
}

/**
 * A name with a control character is never printed as it is (a "\n::warning::" in it would be a
 * workflow command of its own on a CI log): not read, and reported with each such character escaped.
 */
export const unprintableProblem = (file: string): Problem =>
  problemAt(
    {
      file: file.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
      line: 1,
      column: 1,
    },
    "error",
    "unprintable-name",
    "",
    "a file or directory name with a control character (a line break, an escape, a bidirectional override) or bytes that are not UTF-8 is not read: rename it",
  );

export const loopProblem = (file: string): Problem =>
  problemAt(
    { file, line: 1, column: 1 },
    "warning",
    "symlink-loop",
    "",
    "symlink loop: it leads back to itself (or through more than 40 links) and never reaches a file or directory (ELOOP); point it at a manifest or a directory, or remove it",
  );

export const skippedTargetProblem = (file: string): Problem =>
  problemAt(
    { file, line: 1, column: 1 },
    "error",
    "symlink-to-skipped",
    "",
    "symlink leads to a file plumb never reads as a manifest (not named .yaml or .yml, or inside .git, .plumb or node_modules): it is not read; link to a manifest, or remove it",
  );

export const symlinkProblem = (file: string, exists: boolean): Problem =>
  exists
    ? problemAt(
        { file, line: 1, column: 1 },
        "error",
        "symlink-outside-root",
        "",
        "symlink points outside the manifest root",
      )
    : problemAt(
        { file, line: 1, column: 1 },
        "warning",
        "broken-symlink",
        "",
        "symlink target does not exist",
      );
