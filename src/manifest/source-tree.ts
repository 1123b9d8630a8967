import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { PlumbError } from "../errors.js";
import type { DeploymentManifest } from "../schema/manifest.js";
import { isOutside, resolveInsideRoot } from "./inside-root.js";
import { comparePaths, type SourceFile, sourceHasher } from "./source-digest.js";
import type { LoadedManifest } from "./types.js";

// Reads the directory named by spec.source_path (I/O at the edge, like secret values): every regular
// file under it, sorted, with what the digest and the tarball need. Bounded, and inside the root.

/** The control plane takes uploads up to 64 MiB; the files themselves are held to the same bound. */
const MAX_SOURCE_BYTES = 64 * 1024 * 1024;
const MAX_SOURCE_FILES = 20_000;
/** Never part of a source: VCS data, installed dependencies (the build installs them), plumb's status. */
const SKIPPED_SOURCE_DIRECTORIES: ReadonlySet<string> = new Set([".git", "node_modules", ".plumb"]);

export type SourceTree = {
  /** spec.source_path as written. */
  sourcePath: string;
  /** Real path of the directory. */
  dir: string;
  /** Sorted by path; empty unless asked for with `withBytes` (plan needs only the digest). */
  files: SourceFile[];
  size: number;
  digest: string;
};

export type SourceOptions = { root: string; withBytes?: boolean; maxBytes?: number; maxFiles?: number };

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Reads a deployment's spec.source_path. Errors (PlumbError "source-unreadable") name file:line:col. */
export async function readSourceTree(
  loaded: LoadedManifest<DeploymentManifest>,
  options: SourceOptions,
): Promise<SourceTree> {
  const sourcePath = loaded.manifest.spec.source_path;
  const fail = (why: string): never => {
    const at = loaded.locate(["spec", "source_path"]);
    throw new PlumbError("source-unreadable", `${at.file}:${at.line}:${at.column}: source_path ${why}`);
  };
  if (!sourcePath) return fail("is not set (internal_source needs the directory to upload)");
  const { real, realRoot, shown } = await resolveInsideRoot(options.root, loaded.file, sourcePath, fail);
  if (!(await stat(real)).isDirectory()) fail(`${shown} is not a directory`);
  const maxBytes = options.maxBytes ?? MAX_SOURCE_BYTES;
  const maxFiles = options.maxFiles ?? MAX_SOURCE_FILES;
  const found: Array<{ path: string; real: string; mode: 0o644 | 0o755 }> = [];
  let size = 0;
  // Real paths of directories entered, so a symlinked directory is read once and loops end.
  const visited = new Set<string>();

  const addFile = async (relativePath: string, realFile: string) => {
    const info = await stat(realFile);
    size += info.size;
    if (found.length + 1 > maxFiles)
      fail(`${shown} holds more than ${maxFiles} files; keep build outputs and dependencies out of it`);
    if (size > maxBytes)
      fail(`${shown} is over ${mib(maxBytes)}; keep build outputs and dependencies out of it`);
    // git's view of a mode: executable by anyone, or not.
    found.push({ path: relativePath, real: realFile, mode: info.mode & 0o111 ? 0o755 : 0o644 });
  };

  const visit = async (realDir: string, prefix: string): Promise<void> => {
    if (visited.has(realDir)) return;
    visited.add(realDir);
    for (const entry of await readdir(realDir, { withFileTypes: true })) {
      const relativePath = `${prefix}${entry.name}`;
      const path = join(realDir, entry.name);
      let target = path;
      if (entry.isSymbolicLink()) {
        target = await realpath(path).catch(() => fail(`${shown}/${relativePath} is a broken symlink`));
        if (isOutside(realRoot, target))
          fail(`${shown}/${relativePath} leads outside the manifest root through a symlink`);
      }
      const info = entry.isSymbolicLink() ? await stat(target) : await lstat(path);
      if (info.isDirectory()) {
        if (!SKIPPED_SOURCE_DIRECTORIES.has(entry.name)) await visit(target, `${relativePath}/`);
      } else if (info.isFile()) await addFile(relativePath, target);
      // Sockets, FIFOs and devices are not source.
    }
  };
  await visit(real, "");
  if (found.length === 0) fail(`${shown} holds no files`);
  found.sort((a, b) => comparePaths(a.path, b.path));
  const hasher = sourceHasher();
  const files: SourceFile[] = [];
  for (const { path, real: file, mode } of found) {
    const entry = { path, mode, bytes: await readFile(file) };
    hasher.add(entry);
    if (options.withBytes) files.push(entry);
  }
  return { sourcePath, dir: real, files, size, digest: hasher.digest() };
}
