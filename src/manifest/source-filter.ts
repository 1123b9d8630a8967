import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ignore from "ignore";

// What of an internal_source directory is never uploaded (docs/manifests.md "Source uploads"):
// - `.git` (a directory or a worktree's `.git` file), anywhere: repository metadata holds tokens;
// - by default `.env*`, `*.pem`, `*.key`, `id_*` (a `.plumbignore` `!pattern` may take one back);
// - what `.gitignore` and `.plumbignore` at the top of the directory exclude (gitignore syntax);
// - installed dependencies and plumb's own status (`node_modules`, `.plumb`), as before.
// Files behind a `valueFrom.file` secret are left out by their real path (source-tree.ts).

/** Never packed, whatever an ignore file says. */
const NEVER_PACKED: ReadonlySet<string> = new Set([".git"]);
/** Directories skipped as before: the build installs dependencies; plumb's status is not source. */
const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".plumb"]);
/** Credentials by their usual names; `.plumbignore` may re-include one with `!NAME`. */
const DEFAULT_EXCLUDES = [".env*", "*.pem", "*.key", "id_*"];
const IGNORE_FILES = [".gitignore", ".plumbignore"] as const;

/** `isExcluded(path, isDirectory)`: path relative to the source directory, '/' separators. */
export type SourceFilter = (path: string, isDirectory: boolean) => boolean;

const readIgnoreFile = (dir: string, name: string): Promise<string> =>
  readFile(join(dir, name), "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "EISDIR") return "";
    throw error;
  });

/** The filter of the source directory `dir` (its real path): .gitignore, defaults, then .plumbignore. */
export async function loadSourceFilter(dir: string): Promise<SourceFilter> {
  const [gitignore = "", plumbignore = ""] = await Promise.all(
    IGNORE_FILES.map((name) => readIgnoreFile(dir, name)),
  );
  // Later rules win: only .plumbignore can take a default exclusion back.
  const rules = ignore().add(gitignore).add(DEFAULT_EXCLUDES).add(plumbignore);
  return (path, isDirectory) => {
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (NEVER_PACKED.has(name)) return true;
    if (isDirectory && SKIPPED_DIRECTORIES.has(name)) return true;
    return rules.ignores(isDirectory ? `${path}/` : path);
  };
}

/** True when a path relative to the source directory goes through a `.git` entry. */
export const insideGit = (path: string): boolean =>
  path.split("/").some((segment) => NEVER_PACKED.has(segment));
