import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { describeErrno } from "../../errors.js";
import { listManifestFiles } from "../list-tree.js";
import { problemAt } from "../parse/parse.js";
import { inside, toRelative } from "../parse/read-file.js";
import type { Problem } from "../types.js";
import type { Scanner } from "./scan-text.js";

// The files of one directory that may define `kind: Environment` (environment-scan.ts walks the
// directories): its tree as the manifest listing lists it, or its own files only, and the
// directories that could not be listed, as warnings.

const YAML_FILE = /\.ya?ml$/i;

/** Environment files found, and the directories that could not be listed (warnings). */
export type EnvironmentFiles = { files: string[]; problems: Problem[] };

/**
 * The YAML files under `dir` (its tree as the load lists it, or only its own files) that may define
 * `kind: Environment`, sorted, leaving out `skip` (read already, or PATH's own), unread.
 */
export async function environmentFilesUnder(
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
export const asWarnings = (problems: readonly Problem[], base: string): Problem[] =>
  problems.map((p) => ({
    ...p,
    severity: "warning",
    file: toRelative(base, p.file),
    message: p.message.replace(
      /: its manifests are not loaded;/,
      ": its Environment documents, if any, are not read;",
    ),
  }));
