import { constants } from "node:fs";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  describeErrno,
  escapeControls,
  isPathError,
  isPlumbError,
  PlumbError,
  type PlumbErrorCode,
} from "../../errors.js";
import type { DeploymentManifest } from "../../schema/manifest.js";
import { isOutside } from "../../path-inside.js";
import { resolveInsideRoot } from "../inside-root.js";
import { comparePaths, type SourceFile, sourceHasher } from "./source-digest.js";
import { insideGit, loadSourceFilter } from "./source-filter.js";
import type { LoadedManifest } from "../types.js";

// Reads the directory named by spec.source_path (I/O at the edge, like secret values): every regular
// file under it that may be uploaded (source-filter.ts), sorted, with what the digest and the tarball
// need. Bounded; a symlink must stay inside the directory and out of any `.git`. The digest (what
// decides "changed") and the upload come from this one list.

/** The control plane takes uploads up to 64 MiB; the files themselves are held to the same bound. */
const MAX_SOURCE_BYTES = 64 * 1024 * 1024;
const MAX_SOURCE_FILES = 20_000;

export type SourceTree = {
  /** spec.source_path as written. */
  sourcePath: string;
  /** Real path of the directory. */
  dir: string;
  /** Sorted by path; empty unless asked for with `withBytes` (plan needs only the digest). */
  files: SourceFile[];
  /** What the upload holds: every file's path and size, sorted by path (plan lists them). */
  listing: SourceListing;
  /** Real paths of the secret files left out (this deployment's and those given): pack with them. */
  secretFiles: string[];
  size: number;
  digest: string;
};

type SourceListing = Array<{ path: string; size: number }>;

export type SourceOptions = {
  root: string;
  withBytes?: boolean;
  maxBytes?: number;
  maxFiles?: number;
  /** Real paths of files behind `valueFrom.file` secrets of other manifests (never packed). */
  secretFiles?: Iterable<string> | undefined;
};

/** Real paths of the `valueFrom.file` secrets of `manifests` (an unreadable one is its secret's error). */
export async function secretFilesOf(
  manifests: readonly LoadedManifest[],
  root: string,
): Promise<Set<string>> {
  const files = new Set<string>();
  for (const { manifest, file } of manifests) {
    if (manifest.kind !== "Deployment") continue;
    for (const secret of manifest.spec.secrets ?? []) {
      if (!secret.valueFrom || !("file" in secret.valueFrom)) continue;
      const real = await realpath(resolve(root, dirname(file), secret.valueFrom.file)).catch(() => null);
      if (real) files.add(real);
    }
  }
  return files;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Reads a deployment's spec.source_path. Errors (PlumbError "source-unreadable") name file:line:col. */
export async function readSourceTree(
  loaded: LoadedManifest<DeploymentManifest>,
  options: SourceOptions,
): Promise<SourceTree> {
  const sourcePath = loaded.manifest.spec.source_path;
  const failWith = (code: PlumbErrorCode, why: string): never => {
    const at = loaded.locate(["spec", "source_path"]);
    throw new PlumbError(code, `${at.file}:${at.line}:${at.column}: source_path ${why}`);
  };
  const fail = (why: string): never => failWith("source-unreadable", why);
  if (!sourcePath) return fail("is not set (internal_source needs the directory to upload)");
  const { real, realRoot, shown } = await resolveInsideRoot(options.root, loaded.file, sourcePath, fail);
  if (!(await stat(real)).isDirectory()) fail(`${shown} is not a directory`);
  if (insideGit(relative(realRoot, real).split(sep).join("/")))
    failWith(
      "source-unsafe-entry",
      `${shown} is inside a .git directory; name the directory of the agent's source`,
    );
  const maxBytes = options.maxBytes ?? MAX_SOURCE_BYTES;
  const maxFiles = options.maxFiles ?? MAX_SOURCE_FILES;
  const filter = await loadSourceFilter(realRoot, real);
  const secretFiles = new Set([
    ...(options.secretFiles ?? []),
    ...(await secretFilesOf([loaded], options.root)),
  ]);
  const secretInodes = await inodesOf(secretFiles);
  const walk: Walk = { real, realRoot, shown, filter, secretFiles, secretInodes, maxBytes, maxFiles };
  // A directory or file of it that cannot be read (EACCES) is this deployment's error, named at
  // source_path: it ended the whole plan with one io-error line.
  const unreadable = (error: unknown): never => {
    if (isPlumbError(error) || !isPathError(error)) throw error;
    const at = relative(real, error.path).split(sep).join("/");
    const entry = at ? `${shown}/${escapeControls(at)}` : shown;
    return fail(`${entry} cannot be read: ${describeErrno(error)}; check its permissions`);
  };
  const { found, size } = await walkSource(walk, { fail, failWith }).catch(unreadable);
  if (found.length === 0) fail(`${shown} holds no files`);
  const { files, listing, digest } = await hashSource(found, options.withBytes === true, (path, why) =>
    fail(`${shown}/${path} ${why}`),
  ).catch(unreadable);
  return {
    sourcePath,
    dir: real,
    files,
    listing,
    secretFiles: [...secretFiles].sort(),
    size,
    digest,
  };
}

// By inode too: a hard link to a secret file has a path of its own.
const inode = (info: { dev: number; ino: number }) => `${info.dev}:${info.ino}`;

async function inodesOf(files: Iterable<string>): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const file of files) {
    const info = await stat(file).catch(() => null);
    if (info) inodes.add(inode(info));
  }
  return inodes;
}

/** What a walk of the source directory needs to know. */
type Walk = {
  /** Real paths of the source directory and of the manifest root; the path as errors show it. */
  real: string;
  realRoot: string;
  shown: string;
  filter: Awaited<ReturnType<typeof loadSourceFilter>>;
  secretFiles: Set<string>;
  secretInodes: Set<string>;
  maxBytes: number;
  maxFiles: number;
};
type Failures = { fail: (why: string) => never; failWith: (code: PlumbErrorCode, why: string) => never };
type FoundFile = { path: string; real: string; mode: 0o644 | 0o755; size: number };

/** Every file under the directory that may be uploaded, in walk order, within the bounds. */
async function walkSource(
  walk: Walk,
  { fail, failWith }: Failures,
): Promise<{ found: FoundFile[]; size: number }> {
  const { real, realRoot, shown, filter } = walk;
  const found: FoundFile[] = [];
  let size = 0;
  // Real paths of directories entered, so a symlinked directory is read once and loops end.
  const visited = new Set<string>();

  const addFile = async (relativePath: string, realFile: string) => {
    if (walk.secretFiles.has(realFile)) return; // a secret's value is never source
    const info = await stat(realFile);
    if (walk.secretInodes.has(inode(info))) return;
    size += info.size;
    if (found.length + 1 > walk.maxFiles)
      fail(`${shown} holds more than ${walk.maxFiles} files; keep build outputs and dependencies out of it`);
    if (size > walk.maxBytes)
      fail(`${shown} is over ${mib(walk.maxBytes)}; keep build outputs and dependencies out of it`);
    // git's view of a mode: executable by anyone, or not.
    found.push({
      path: relativePath,
      real: realFile,
      mode: info.mode & 0o111 ? 0o755 : 0o644,
      size: info.size,
    });
  };

  const visit = async (realDir: string, prefix: string): Promise<void> => {
    if (visited.has(realDir)) return;
    visited.add(realDir);
    await filter.enter(prefix, realDir);
    for (const entry of await readdir(realDir, { withFileTypes: true })) {
      const relativePath = `${prefix}${entry.name}`;
      const path = join(realDir, entry.name);
      let target = path;
      if (entry.isSymbolicLink()) {
        target = await realpath(path).catch((error: NodeJS.ErrnoException) =>
          fail(
            error.code === "ELOOP"
              ? `${shown}/${relativePath} is a symlink loop (ELOOP) that never reaches a file; remove it`
              : `${shown}/${relativePath} is a broken symlink`,
          ),
        );
        const unsafe = (why: string) =>
          failWith(
            "source-unsafe-entry",
            `${shown}/${relativePath} is a symlink ${why}; remove it, or copy what it needs into ${shown}`,
          );
        if (isOutside(realRoot, target)) unsafe("that leads outside the manifest root");
        if (isOutside(real, target)) unsafe(`that leaves ${shown}`);
        if (insideGit(relative(real, target).split(sep).join("/"))) unsafe("into a .git directory");
      }
      const info = await (entry.isSymbolicLink() ? stat(target) : lstat(path)).catch((error: unknown) => {
        // readdir gives a name that is not UTF-8 with U+FFFD for its bytes: a name no file has.
        if (!entry.name.includes("\uFFFD")) throw error;
        return fail(
          `${shown}/${escapeControls(relativePath)} is named with bytes that are not UTF-8; rename it`,
        );
      });
      if (!info.isDirectory() && !info.isFile()) continue; // sockets, FIFOs and devices are not source
      const targetPath = relative(real, target).split(sep).join("/");
      // A link is left out when its own path or what it points to is (config.txt -> .env).
      const isDirectory = info.isDirectory();
      if (
        filter.excluded(relativePath, isDirectory) ||
        (targetPath !== "" && filter.excluded(targetPath, isDirectory))
      )
        continue;
      if (info.isDirectory()) await visit(target, `${relativePath}/`);
      else await addFile(relativePath, target);
    }
  };
  await visit(real, "");
  return { found, size };
}

/** Sorted by path: the digest of the files' paths, modes and bytes (and the bytes, when asked for). */
async function hashSource(
  found: FoundFile[],
  withBytes: boolean,
  fail: (path: string, why: string) => never,
) {
  found.sort((a, b) => comparePaths(a.path, b.path));
  const hasher = sourceHasher();
  const files: SourceFile[] = [];
  const listing: SourceListing = found.map((f) => ({ path: f.path, size: f.size }));
  for (const { path, real: file, mode, size } of found) {
    const entry = { path, mode, bytes: await readListedFile(file, size, (why) => fail(path, why)) };
    hasher.add(entry);
    if (withBytes) files.push(entry);
  }
  return { files, listing, digest: hasher.digest() };
}

// Without waiting for a writer: a FIFO put where a listed file was is refused, not read for ever.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * A file of the walk read as it was listed: still a regular file of `size` bytes. One that became a
 * FIFO blocked plan and apply for ever in readFile; one that grew was read whole, however large.
 */
export async function readListedFile(
  file: string,
  size: number,
  fail: (why: string) => never,
): Promise<Buffer> {
  const changed = (now: string) => fail(`changed while plumb read it (${now}): run again`);
  const handle = await open(file, READ_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) changed("no longer a regular file");
    if (info.size !== size) changed(`${info.size} bytes, not ${size}`);
    const bytes = Buffer.alloc(size + 1); // one byte more: a file growing meanwhile is seen
    let read = 0;
    for (let n = -1; n !== 0 && read <= size; read += n)
      n = (await handle.read(bytes, read, bytes.length - read, read)).bytesRead;
    if (read !== size) changed(`${read > size ? "more" : read} bytes, not ${size}`);
    return bytes.subarray(0, size);
  } finally {
    await handle.close();
  }
}
