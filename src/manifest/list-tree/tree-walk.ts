import { type Dirent, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import {
  inside,
  notRegularProblem,
  toRelative,
  unreadableProblem,
  type YamlFile,
} from "../parse/read-file.js";
import type { Problem } from "../types.js";
import {
  hasUnshowableName,
  loopProblem,
  skippedTargetProblem,
  symlinkProblem,
  unprintableProblem,
} from "./walk-problems.js";

// The walk of a manifest tree (list-tree.ts): its directories read in name order, links followed
// inside the tree, each directory once, and what it does not read set down as problems.

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git", ".plumb"]);
const YAML_FILE = /\.ya?ml$/i;

/**
 * A symlink inside the root that leads where the walk itself never reads: into `.git`, `.plumb` or
 * `node_modules`, or (for a file) to one not named *.yaml or *.yml. Followed, `leak.yaml ->
 * .git/config` had the YAML errors quote the credentials a CI checkout keeps there
 * ("Unexpected scalar token in YAML stream: "basic …"), and a link to `.env` its values.
 */
export function skippedTarget(realBase: string, real: string, isDirectory: boolean): boolean {
  const segments = real.slice(realBase.length + 1).split(sep);
  if (segments.some((segment) => SKIPPED_DIRECTORIES.has(segment))) return true;
  return !isDirectory && !YAML_FILE.test(segments.at(-1) ?? "");
}

/** The file system calls of the walk (listYamlFiles). */
type WalkCalls = {
  realpath: (path: string) => Promise<string>;
  readdir: (dir: string) => Promise<Dirent[]>;
  stat: (path: string) => Promise<Stats>;
};
/** For the controller, whose event loop keeps serving while a tree is listed. */
export const ASYNC: WalkCalls = { realpath, readdir: (dir) => readdir(dir, { withFileTypes: true }), stat };
/**
 * For a command's parallel load (nothing else to serve): the same calls made synchronously, with
 * no round trip through libuv's thread pool for each (10,000 files in 100 directories: ~10 ms
 * less). The parse workers, when a tree needs them, start after the listing (parse-pool.ts).
 */
export const SYNC: WalkCalls = {
  realpath: async (path) => realpathSync(path),
  readdir: async (dir) => readdirSync(dir, { withFileTypes: true }),
  stat: async (path) => statSync(path),
};

export async function listYamlFiles(
  base: string,
  realBase: string,
  problems: Problem[],
  calls: WalkCalls,
): Promise<YamlFile[]> {
  const files: YamlFile[] = [];
  const add = (file: YamlFile) => void files.push(file);
  const shown = (path: string) => toRelative(base, path);
  // Real paths of directories seen, so a symlinked directory is read once and loops end.
  const visited = new Set<string>();
  // `realDir`: known, never asked for (below).
  const visit = async (dir: string, realDir: string): Promise<void> => {
    // The root's own failure is the command's (thrown); a directory under it is one problem.
    const listed = await listDirectory(dir, realDir, calls, visited).catch((error: unknown) => {
      if (dir === base) throw error;
      problems.push(unreadableProblem(shown(dir), error, "directory"));
      return undefined;
    });
    if (!listed) return;
    for (const entry of listed.entries) {
      const path = join(dir, entry.name);
      const yaml = YAML_FILE.test(entry.name);
      if (hasUnshowableName(entry.name, path)) {
        if (entry.isDirectory() || yaml) problems.push(unprintableProblem(shown(path)));
      } else if (entry.isDirectory()) {
        // A plain directory's real path is its parent's and its name: a realpath call per directory
        // walked every component of its path (glibc lstats each one), and 2,000 nested directories
        // took validate 2 minutes and 40 seconds.
        if (!SKIPPED_DIRECTORIES.has(entry.name)) await visit(path, join(realDir, entry.name));
      } else if (entry.isSymbolicLink()) {
        const target = await linkTarget(path, calls);
        if ("problem" in target) {
          const problem = target.problem(shown(path), yaml);
          if (problem && !SKIPPED_DIRECTORIES.has(entry.name)) problems.push(problem);
        } else if (!inside(realBase, target.real)) {
          if (yaml || target.stats.isDirectory()) problems.push(symlinkProblem(shown(path), true));
        } else if (target.stats.isDirectory()) {
          // Into .git, .plumb or node_modules: skipped however it is reached, quietly.
          const skipped = SKIPPED_DIRECTORIES.has(entry.name) || skippedTarget(realBase, target.real, true);
          if (!skipped) await visit(path, target.real);
        } else if (yaml && skippedTarget(realBase, target.real, false)) {
          problems.push(skippedTargetProblem(shown(path)));
        } else if (yaml && target.stats.isFile()) add({ path, real: target.real });
        else if (yaml) problems.push(notRegularProblem(shown(path), target.stats));
      } else if (yaml) {
        // A plain file in a directory whose real path is known: no realpath call per file.
        if (entry.isFile()) add({ path, real: join(realDir, entry.name) });
        else problems.push(notRegularProblem(shown(path), entry)); // FIFOs, sockets, devices: never opened
      }
    }
  };
  await visit(base, realBase);
  return files;
}

/** A directory's entries in name order; undefined when seen already (by its real path). */
async function listDirectory(dir: string, realDir: string, calls: WalkCalls, visited: Set<string>) {
  if (visited.has(realDir)) return undefined;
  visited.add(realDir);
  const entries = await calls.readdir(dir);
  return { entries: entries.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

type LinkTarget =
  | { real: string; stats: Stats }
  /** Why the link leads nowhere, as the problem to report (if any) for its name. */
  | { problem: (file: string, yaml: boolean) => Problem | undefined };

/** Where a symlink of the tree leads, or why it leads nowhere. */
async function linkTarget(path: string, calls: WalkCalls): Promise<LinkTarget> {
  try {
    const real = await calls.realpath(path);
    return { real, stats: await calls.stat(real) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A loop is never a file nor a directory, whatever its name: it may have been meant as either.
    if (code === "ELOOP") return { problem: (file) => loopProblem(file) };
    // Any other name may point at what is not there yet (a build's output): not plumb's concern.
    if (code === "ENOENT" || code === "ENOTDIR")
      return { problem: (file, yaml) => (yaml ? symlinkProblem(file, false) : undefined) };
    return { problem: (file, yaml) => (yaml ? unreadableProblem(file, error, "symlink") : undefined) };
  }
}
