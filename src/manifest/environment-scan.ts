import { gitRootOf } from "../git-root.js";
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { describeErrno } from "../errors.js";
import { listManifestFiles } from "./list-tree.js";
import { MAX_MANIFEST_BYTES, problemAt } from "./parse/parse.js";
import { inside, toRelative } from "./parse/read-file.js";
import type { Problem } from "./types.js";

// Where the Environment documents a PATH runs with are (docs/environments.md "One file as PATH",
// "A directory as PATH"): the files are those the manifest listing lists (list-tree.ts: its links
// followed inside the tree, an unreadable directory named and skipped), their text scanned for
// `kind: Environment`, each file read at most once per scan.

const YAML_FILE = /\.ya?ml$/i;
/**
 * `kind: Environment` in a block mapping, or as a key of a flow mapping (`{"kind": "Environment",
 * ...}`, a file written as JSON, which is YAML too), not after a `#` on its line. Only the block form
 * was seen: such an Environment was found by a full load of PATH, never above it (`--env` refused
 * "no kind: Environment document is defined"), and `plumb apply .` took the tree for one without.
 */
const ENVIRONMENT_KIND = /^[^#\n]*?(?:^|[\s{,])["']?kind["']?\s*:\s*["']?Environment["']?\s*(?:[,}#]|$)/m;

/** Environment files found, and the directories that could not be listed (warnings). */
export type EnvironmentFiles = { files: string[]; problems: Problem[] };

type ScanOptions = {
  maxBytes?: number;
  /**
   * An environment is asked for by name (--env, a saved plan's), so a file or directory that names
   * none reads those above it too (load.ts environmentRequested).
   */
  requested?: boolean;
  /** A file's text as the scan reads it (tests count the reads); default readUpTo(maxBytes). */
  readText?: (file: string) => string;
};

/** The scan's reader: each file read once (its text kept only as the two answers the scan needs). */
function scanner(options: ScanOptions) {
  const read = options.readText ?? readUpTo(options.maxBytes ?? MAX_MANIFEST_BYTES);
  const seen = new Map<string, { defines: boolean; names: boolean }>();
  return (file: string) => {
    let found = seen.get(file);
    if (!found) {
      const text = read(file);
      found = { defines: ENVIRONMENT_KIND.test(text), names: NAMES_ENVIRONMENTS.test(text) };
      seen.set(file, found);
    }
    return found;
  };
}
type Scanner = ReturnType<typeof scanner>;

/**
 * Whether any manifest under `path` may define `kind: Environment` (with `above`, also: whether a
 * directory whose files name environments runs with those above it): far cheaper than loading the
 * tree, so a repository without environments is loaded once per command, as before. The files are
 * those the load lists; a false "yes" only costs a full load; a missing or unreadable path answers
 * no (the command reports it as before).
 */
export async function mayDefineEnvironments(
  path: string,
  options: ScanOptions & { above?: boolean } = {},
): Promise<boolean> {
  const scan = scanner(options);
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  try {
    if (!(await stat(path)).isDirectory())
      return scan(resolve(path)).defines || (await environmentFilesFor(path, options, scan)).files.length > 0;
    const { files } = await listManifestFiles(path, { maxBytes, parallel: true });
    let names = false; // a file of the tree names environments (for `above`)
    for (const file of files) {
      const found = scan(file.path);
      if (found.defines) return true;
      names ||= found.names;
    }
    return (
      options.above === true &&
      (names || options.requested === true) &&
      (await environmentFilesAbove(path, options, scan)).files.length > 0
    );
  } catch {
    return false;
  }
}

/**
 * The YAML files under `dir` (its tree as the load lists it, or only its own files) that may define
 * `kind: Environment`, sorted, leaving out `skip` (read already, or PATH's own), unread.
 */
async function environmentFilesUnder(
  dir: string,
  maxBytes: number,
  scan: Scanner,
  skip: (file: string) => boolean,
  tree = true,
): Promise<EnvironmentFiles> {
  const listed = tree
    ? await listManifestFiles(dir, { maxBytes, parallel: true }).then(
        ({ files, problems }) => ({ files: files.map((f) => f.path), problems }),
        (error: unknown) => ({ files: [], problems: [unlisted(dir, error)] }),
      )
    : ownFiles(dir);
  const files = listed.files.filter((file) => !skip(file) && scan(file).defines).sort();
  const problems = listed.problems
    .filter((p) => p.code === "manifest-unreadable")
    .map((p) => ({ ...p, file: join(dir, p.file) }));
  return { files, problems };
}

/**
 * The YAML files of `dir` itself, not its tree (a directory outside any repository): plain files,
 * and links to a YAML file inside it, as the listing follows them. An unreadable `dir` has none.
 */
function ownFiles(dir: string): { files: string[]; problems: Problem[] } {
  try {
    const realDir = realpathSync(dir);
    const files = readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (!YAML_FILE.test(entry.name)) return [];
      if (entry.isFile()) return [path];
      if (!entry.isSymbolicLink()) return [];
      try {
        const real = realpathSync(path);
        return inside(realDir, real) && YAML_FILE.test(real) && statSync(real).isFile() ? [path] : [];
      } catch {
        return [];
      }
    });
    return { files, problems: [] };
  } catch (error) {
    return { files: [], problems: [unlisted(dir, error)] };
  }
}

/** A directory above PATH the scan could not list: a warning (its Environments, if any, unseen). */
const unlisted = (dir: string, error: unknown): Problem =>
  problemAt(
    { file: dir, line: 1, column: 1 },
    "warning",
    "manifest-unreadable",
    "",
    `directory cannot be read: ${describeErrno(error)}: its Environment documents, if any, are not read; check its permissions`,
  );

/** The scan's problems as a warning each, under their path from `base` (PATH's directory). */
const asWarnings = (problems: readonly Problem[], base: string): Problem[] =>
  problems.map((p) => ({
    ...p,
    severity: "warning",
    file: toRelative(base, p.file),
    message: p.message.replace(
      /: its manifests are not loaded;/,
      ": its Environment documents, if any, are not read;",
    ),
  }));

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
 * (another folder's examples must not decide where it is applied) unless an environment is asked
 * for by name (`requested`: --env says where it is applied). The file itself is left out
 * (it is loaded anyway). Absolute paths; problems under their path from the file's directory.
 */
export async function environmentFilesFor(
  file: string,
  options: ScanOptions = {},
  scan: Scanner = scanner(options),
): Promise<EnvironmentFiles> {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const own = realOrResolved(file);
  const { defines, names } = scan(own);
  const base = dirname(own);
  const repository = gitRootOf(base);
  const top = names || options.requested === true ? (repository ?? base) : base;
  const problems: Problem[] = [];
  for (let dir = base; ; dir = dirname(dir)) {
    // Outside a repository nothing bounds a directory's tree (a file in /tmp or $HOME): only the
    // file's own directory's files are read, never other projects below it.
    const found = await environmentFilesUnder(
      dir,
      maxBytes,
      scan,
      (f) => f === own,
      repository !== undefined,
    );
    problems.push(...found.problems);
    if (found.files.length > 0 || defines || dir === top || dirname(dir) === dir)
      return { files: found.files, problems: asWarnings(problems, base) };
  }
}

/**
 * The Environment documents a directory as PATH runs with when its own tree defines none and its
 * manifests name environments (docs/environments.md, "A directory as PATH"): those of the nearest
 * directory above it, up to the root of its git repository, whose tree holds any (the rule for one
 * file, from the directory's parent). None outside a repository or at its root. Absolute paths;
 * problems under their path from the directory. The directory's own files are not read again.
 */
export async function environmentFilesAbove(
  dir: string,
  options: ScanOptions = {},
  scan: Scanner = scanner(options),
): Promise<EnvironmentFiles> {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const own = realOrResolved(dir);
  const top = gitRootOf(own);
  if (top === undefined || top === own) return { files: [], problems: [] };
  const problems: Problem[] = [];
  for (let at = dirname(own); ; at = dirname(at)) {
    const found = await environmentFilesUnder(at, maxBytes, scan, (file) => file.startsWith(own + sep));
    problems.push(...found.problems);
    if (found.files.length > 0 || at === top || dirname(at) === at)
      return { files: found.files, problems: asWarnings(problems, own) };
  }
}

/**
 * A PATH's real path (its links resolved), where the scan starts: a link to a directory or file of
 * a repository (`/srv/agents -> /repo/agents`) is in that repository, as `cd /srv/agents` and git
 * have it. Walked from the link's own parents it was outside any, so --env was refused there while
 * `cd /srv/agents && plumb plan . --env prod` ran. A path that does not exist stays as resolved.
 */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
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

export { gitRootOf };
