import { gitRootOf } from "../git-root.js";
import { realpathSync } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import { listManifestFiles } from "./list-tree.js";
import { MAX_MANIFEST_BYTES } from "./parse/parse.js";
import type { Problem } from "./types.js";
import { asWarnings, type EnvironmentFiles, environmentFilesUnder } from "./environment-scan/files-under.js";
import { type ScanOptions, scanner, type Scanner } from "./environment-scan/scan-text.js";

export type { EnvironmentFiles } from "./environment-scan/files-under.js";

// Where the Environment documents a PATH runs with are (docs/environments.md "One file as PATH",
// "A directory as PATH"): the files are those the manifest listing lists (list-tree.ts: its links
// followed inside the tree, an unreadable directory named and skipped), their text scanned for
// `kind: Environment`, each file read at most once per scan.

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

export { gitRootOf };
