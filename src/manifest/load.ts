import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import pLimit from "p-limit";
import { PlumbError } from "../errors.js";
import {
  decodeManifestBytes,
  MAX_MANIFEST_BYTES,
  type ParsedDocument,
  parseManifestText,
  problemAt,
  tooLarge,
} from "./parse.js";
import type { LoadedManifest, Problem } from "./types.js";
import { validateDocuments } from "./validate.js";

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git", ".plumb"]);
const YAML_FILE = /\.ya?ml$/i;

export type LoadResult = { manifests: LoadedManifest[]; problems: Problem[] };

/**
 * Loads and validates every *.yaml / *.yml under `root` (or the one file `root` names).
 * Problems are data; only a missing root throws. Paths in results are relative to the root.
 */
export type LoadOptions = {
  /** Files over this many bytes are refused unread (`manifest-too-large`); see maxManifestBytesFrom. */
  maxBytes?: number;
};

export async function loadManifests(root: string, options: LoadOptions = {}): Promise<LoadResult> {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const absolute = resolve(root);
  const info = await stat(absolute).catch(() => undefined);
  if (!info) throw new PlumbError("path-not-found", `manifest path ${root} does not exist`);
  const base = info.isDirectory() ? absolute : dirname(absolute);
  const realBase = await realpath(base);
  const problems: Problem[] = [];
  const files = info.isDirectory() ? await listYamlFiles(base, realBase, problems) : [absolute];

  const limit = pLimit(32);
  const parsed = await Promise.all(files.map((path) => limit(() => readOne(path, base, realBase, maxBytes))));
  const documents: ParsedDocument[] = [];
  for (const result of parsed) {
    documents.push(...result.documents);
    problems.push(...result.problems);
  }
  return validateDocuments(documents, problems);
}

const toRelative = (base: string, path: string) =>
  relative(base, path).split(sep).join("/") || basename(path);

const inside = (realBase: string, real: string) => real === realBase || real.startsWith(realBase + sep);

async function listYamlFiles(base: string, realBase: string, problems: Problem[]): Promise<string[]> {
  const files: string[] = [];
  // Real paths of directories seen, so a symlinked directory is read once and loops end.
  const visited = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    const realDir = await realpath(dir);
    if (visited.has(realDir)) return;
    visited.add(realDir);
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name)) await visit(path);
      } else if (entry.isSymbolicLink()) {
        const real = await realpath(path).catch(() => undefined);
        const target = real ? await stat(real) : undefined;
        const relevant = YAML_FILE.test(entry.name) || Boolean(target?.isDirectory());
        if (!real || !target || !inside(realBase, real)) {
          if (relevant) problems.push(symlinkProblem(toRelative(base, path), Boolean(real)));
          continue;
        }
        if (target.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) await visit(path);
        else if (target.isFile() && YAML_FILE.test(entry.name)) files.push(path);
      } else if (entry.isFile() && YAML_FILE.test(entry.name)) files.push(path);
    }
  };
  await visit(base);
  return files;
}

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

async function readOne(path: string, base: string, realBase: string, maxBytes: number) {
  const file = toRelative(base, path);
  const real = await realpath(path);
  if (!inside(realBase, real)) {
    const message = "file is a symlink that points outside the manifest root";
    return {
      documents: [],
      problems: [problemAt({ file, line: 1, column: 1 }, "error", "symlink-outside-root", "", message)],
    };
  }
  const size = (await lstat(real)).size;
  if (size > maxBytes) return { documents: [], problems: [tooLarge(file, size, maxBytes)] };
  const decoded = decodeManifestBytes(await readFile(real), file, maxBytes);
  if ("problem" in decoded) return { documents: [], problems: [decoded.problem] };
  return parseManifestText(decoded.text, file);
}
