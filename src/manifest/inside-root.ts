import { realpath } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import { isOutside } from "../path-inside.js";

// The one check that a path named in a manifest (valueFrom.file, spec.source_path) stays inside the
// manifest root, by its text and through symlinks. Validation checks the text alone (leavesRoot).

/** `path` relative to the root, with '/' separators, as shown to users. */
const shownPath = (root: string, path: string): string => relative(root, path).split(sep).join("/") || ".";

export type InsidePath = { path: string; real: string; realRoot: string; shown: string };

/**
 * Resolves `target` (relative to the directory of `manifestFile`, itself relative to `root`) and
 * checks it stays inside `root` even through symlinks. `fail` gets a reason naming the path
 * relative to the root, and must throw.
 */
export async function resolveInsideRoot(
  root: string,
  manifestFile: string,
  target: string,
  fail: (why: string) => never,
): Promise<InsidePath> {
  const absoluteRoot = resolve(root);
  const path = resolve(absoluteRoot, dirname(manifestFile), target);
  const shown = shownPath(absoluteRoot, path);
  if (isOutside(absoluteRoot, path)) fail(`${shown} is outside the manifest root`);
  const real = await realpath(path).catch((error: NodeJS.ErrnoException) =>
    fail(
      error.code === "ELOOP"
        ? `${shown} is a symlink loop (ELOOP) that never reaches a file or directory`
        : `${shown} does not exist`,
    ),
  );
  const realRoot = await realpath(absoluteRoot);
  if (isOutside(realRoot, real)) fail(`${shown} leads outside the manifest root through a symlink`);
  return { path, real, realRoot, shown };
}
