import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from "node:fs";
import { MAX_MANIFEST_BYTES } from "./parse/parse.js";
import { dirname, join, resolve, sep } from "node:path";

const SKIPPED = new Set(["node_modules", ".git", ".plumb"]);
const YAML_FILE = /\.ya?ml$/i;
const ENVIRONMENT_KIND = /^kind:\s*["']?Environment["']?\s*(#.*)?$/m;

/**
 * Whether any manifest under `path` may define `kind: Environment`: a text scan, far cheaper than
 * loading the tree, so a repository without environments is loaded once per command, as before.
 * A false "yes" only costs a full load; a missing or unreadable path answers no (the command
 * reports it as before).
 */
export function mayDefineEnvironments(
  path: string,
  options: { above?: boolean; maxBytes?: number } = {},
): boolean {
  const read = readUpTo(options.maxBytes ?? MAX_MANIFEST_BYTES);
  let names = false; // a file of the tree names environments (for `above`)
  const visit = (dir: string): boolean => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && !SKIPPED.has(entry.name) && visit(full)) return true;
      if (entry.isDirectory() || !YAML_FILE.test(entry.name)) continue;
      const text = read(full);
      if (ENVIRONMENT_KIND.test(text)) return true;
      names ||= NAMES_ENVIRONMENTS.test(text);
    }
    return false;
  };
  try {
    if (statSync(path).isDirectory())
      return (
        visit(path) ||
        (options.above === true && names && environmentFilesAbove(path, options.maxBytes).length > 0)
      );
    return ENVIRONMENT_KIND.test(read(path)) || environmentFilesFor(path, options.maxBytes).length > 0;
  } catch {
    return false;
  }
}

/** The YAML files under `dir` (its tree, or only its own files) that may define `kind: Environment`, sorted. */
function environmentFilesUnder(dir: string, maxBytes: number, tree = true): string[] {
  const read = readUpTo(maxBytes);
  const found: string[] = [];
  const visit = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory() && !SKIPPED.has(entry.name)) {
        if (tree) visit(full);
      } else if (entry.isFile() && YAML_FILE.test(entry.name) && ENVIRONMENT_KIND.test(read(full)))
        found.push(full);
    }
  };
  visit(dir);
  return found.sort();
}

/**
 * A file that names environments: `metadata.environments` or an `environments:` overrides map, in
 * block or flow form (`metadata: {name: a, environments: [prod]}`). A false "yes" costs a look up
 * the tree only.
 */
const NAMES_ENVIRONMENTS = /(?:^|[\s{,])["']?environments["']?\s*:/m;

/**
 * The Environment documents a single manifest file runs with (docs/environments.md, "One file as
 * PATH"): the files defining `kind: Environment` in the file's own directory's tree; when there are
 * none and the file names environments itself, in the tree of the nearest directory that has any,
 * up to the root of its git repository (outside a repository, the files of the file's own directory
 * only, not the tree below it). A file
 * that names no environment is never pulled into environments found outside its own directory
 * (another folder's examples must not decide where it is applied). The file itself is left out
 * (it is loaded anyway). Absolute paths.
 */
export function environmentFilesFor(file: string, maxBytes = MAX_MANIFEST_BYTES): string[] {
  const own = resolve(file);
  const text = readUpTo(maxBytes)(own);
  let dir = dirname(own);
  const repository = gitRootOf(dir);
  const top = NAMES_ENVIRONMENTS.test(text) ? (repository ?? dir) : dir;
  for (;;) {
    // Outside a repository nothing bounds a directory's tree (a file in /tmp or $HOME): only the
    // file's own directory's files are read, never other projects below it.
    const found = environmentFilesUnder(dir, maxBytes, repository !== undefined).filter((f) => f !== own);
    if (found.length > 0 || ENVIRONMENT_KIND.test(text)) return found;
    if (dir === top || dirname(dir) === dir) return [];
    dir = dirname(dir);
  }
}

/**
 * The Environment documents a directory as PATH runs with when its own tree defines none and its
 * manifests name environments (docs/environments.md, "A directory as PATH"): those of the nearest
 * directory above it, up to the root of its git repository, whose tree holds any (the rule for one
 * file, from the directory's parent). None outside a repository or at its root. Absolute paths.
 */
export function environmentFilesAbove(dir: string, maxBytes = MAX_MANIFEST_BYTES): string[] {
  const own = resolve(dir);
  const top = gitRootOf(own);
  if (top === undefined || top === own) return [];
  for (let at = dirname(own); ; at = dirname(at)) {
    const found = environmentFilesUnder(at, maxBytes).filter((file) => !file.startsWith(own + sep));
    if (found.length > 0 || at === top || dirname(at) === at) return found;
  }
}

/** The nearest directory holding `.git`, from `dir` up; undefined outside a repository. */
export function gitRootOf(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * A file's text for the scan, or "" when it cannot be read or is larger than the load accepts
 * (`manifest-too-large`: it is refused there, unread, so nothing in it counts; and a hostile
 * gigabyte file in the tree is not read whole by a scan).
 */
const readUpTo =
  (maxBytes: number) =>
  (file: string): string => {
    let fd: number | undefined;
    try {
      // Without waiting for a writer: a FIFO named *.yaml blocked apply, drift, status and the
      // controller's start for ever in this open. Only a regular file is read (the load says why not).
      fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
      const stats = fstatSync(fd);
      const size = stats.size;
      if (!stats.isFile() || size > maxBytes) return "";
      const bytes = Buffer.allocUnsafe(size);
      let read = 0;
      for (let n = 1; read < size && n > 0; read += n) n = readSync(fd, bytes, read, size - read, read);
      return bytes.toString("utf8", 0, read);
    } catch {
      return "";
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };
