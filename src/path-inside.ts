import { isAbsolute, relative, sep } from "node:path";

// The one test of "is this path outside that directory", for every layer that asks it (manifest
// paths, status stores, the status branch, the controller's own records). By path text only: a
// caller that must follow symlinks resolves both paths first (src/manifest/inside-root.ts).

/**
 * True when `path` is outside `root` (both absolute, or both relative to one directory). A name
 * that only starts with two dots (`..deploy`) is inside: `relative` is `..` or starts with `../`
 * only for a path that leaves the directory.
 */
export const isOutside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
};
