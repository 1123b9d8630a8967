import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { describeErrno, escapeControls, PlumbError } from "../errors.js";
import { kindOf } from "../regular-file.js";
import { MAX_MANIFEST_BYTES, problemAt } from "./parse/parse.js";
import {
  inside,
  notRegularProblem,
  toRelative,
  unreadableProblem,
  type YamlFile,
} from "./parse/read-file.js";
import type { Problem } from "./types.js";

// The listing of a manifest tree (load.ts reads what it lists): every *.yaml / *.yml under PATH in
// reading order, or the one file PATH names, and what the walk met that it does not read (links
// that lead nowhere or out of the tree, loops, what is not a regular file, names it cannot show).

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git", ".plumb"]);
const YAML_FILE = /\.ya?ml$/i;

/** How a tree is listed: the size limit its files are read with, and synchronously for a command's parallel load. */
export type ListOptions = { maxBytes?: number; parallel?: boolean };

/** The root's manifest files (one, when `root` names a file), with the problems listing found. */
export async function listManifestFiles(root: string, options: ListOptions) {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const absolute = resolve(root);
  const info = await checkManifestPath(root);
  const base = info.isDirectory() ? absolute : dirname(absolute);
  const realBase = await realpath(base);
  const problems: Problem[] = [];
  const files = info.isDirectory()
    ? inReadingOrder(base, await listYamlFiles(base, realBase, problems, options.parallel ? SYNC : ASYNC))
    : await theFile(absolute, realBase, problems);
  return { files, base, realBase, problems, maxBytes };
}

/** One file as PATH; a link named as PATH (a changed file a CI job validates) leads to a manifest only. */
async function theFile(absolute: string, realBase: string, problems: Problem[]): Promise<YamlFile[]> {
  const real = await realpath(absolute);
  const link = lstatSync(absolute).isSymbolicLink();
  // One outside the directory is refused as outside the root when it is read.
  if (!link || !inside(realBase, real) || !skippedTarget(realBase, real, false))
    return [{ path: absolute, real }];
  problems.push(skippedTargetProblem(basename(absolute)));
  return [];
}

/**
 * A symlink inside the root that leads where the walk itself never reads: into `.git`, `.plumb` or
 * `node_modules`, or (for a file) to one not named *.yaml or *.yml. Followed, `leak.yaml ->
 * .git/config` had the YAML errors quote the credentials a CI checkout keeps there
 * ("Unexpected scalar token in YAML stream: "basic …"), and a link to `.env` its values.
 */
function skippedTarget(realBase: string, real: string, isDirectory: boolean): boolean {
  const segments = real.slice(realBase.length + 1).split(sep);
  if (segments.some((segment) => SKIPPED_DIRECTORIES.has(segment))) return true;
  return !isDirectory && !YAML_FILE.test(segments.at(-1) ?? "");
}

/**
 * PATH as a command or the controller is given it: a directory or a regular file (its stat), else a
 * typed error that says why. A FIFO as PATH blocked the command for ever; a symlink loop was said
 * not to exist.
 */
export async function checkManifestPath(root: string): Promise<Stats> {
  const named = `manifest path ${escapeControls(root)}`;
  const info = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR")
      throw new PlumbError("path-not-found", `${named} does not exist`);
    if (error.code === "ELOOP")
      throw new PlumbError(
        "path-unreadable",
        `${named} is a symlink loop (ELOOP): it never reaches a file or a directory; point it at the manifests`,
      );
    throw new PlumbError(
      "path-unreadable",
      `${named} cannot be read: ${describeErrno(error)}; check its permissions`,
    );
  });
  if (!info.isDirectory() && !info.isFile())
    throw new PlumbError(
      "path-unreadable",
      `${named} is ${kindOf(info)}, not a directory or a regular file; give the manifests' directory or file`,
    );
  return info;
}

/** Sorted as validation reads documents (by the path shown: `team-1.yaml` before `team-1/a.yaml`). */
function inReadingOrder(base: string, files: YamlFile[]): YamlFile[] {
  const shown = new Map(files.map((file) => [file, toRelative(base, file.path)]));
  return files.sort((a, b) => {
    const [x, y] = [shown.get(a)!, shown.get(b)!];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** The file system calls of the walk (listYamlFiles). */
type WalkCalls = {
  realpath: (path: string) => Promise<string>;
  readdir: (dir: string) => Promise<Dirent[]>;
  stat: (path: string) => Promise<Stats>;
};
/** For the controller, whose event loop keeps serving while a tree is listed. */
const ASYNC: WalkCalls = { realpath, readdir: (dir) => readdir(dir, { withFileTypes: true }), stat };
/**
 * For a command's parallel load (nothing else to serve): the same calls made synchronously, with
 * no round trip through libuv's thread pool for each (10,000 files in 100 directories: ~10 ms
 * less). The parse workers, when a tree needs them, start after the listing (parse-pool.ts).
 */
const SYNC: WalkCalls = {
  realpath: async (path) => realpathSync(path),
  readdir: async (dir) => readdirSync(dir, { withFileTypes: true }),
  stat: async (path) => statSync(path),
};

async function listYamlFiles(
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

/** C0 and C1 control characters, DEL, and the bidirectional overrides and isolates. */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A name that cannot be shown as it is: one with a control character, or one that is not UTF-8
 * (readdir gives it with U+FFFD in place of its bytes, a name no file has: opening it failed with
 * ENOENT, and the whole command with it). A real U+FFFD in a name costs one lstat to tell apart.
 */
function hasUnshowableName(name: string, path: string): boolean {
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
const unprintableProblem = (file: string): Problem =>
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

const loopProblem = (file: string): Problem =>
  problemAt(
    { file, line: 1, column: 1 },
    "warning",
    "symlink-loop",
    "",
    "symlink loop: it leads back to itself (or through more than 40 links) and never reaches a file or directory (ELOOP); point it at a manifest or a directory, or remove it",
  );

const skippedTargetProblem = (file: string): Problem =>
  problemAt(
    { file, line: 1, column: 1 },
    "error",
    "symlink-to-skipped",
    "",
    "symlink leads to a file plumb never reads as a manifest (not named .yaml or .yml, or inside .git, .plumb or node_modules): it is not read; link to a manifest, or remove it",
  );

const symlinkProblem = (file: string, exists: boolean): Problem =>
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
