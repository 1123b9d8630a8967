import { realpath, stat } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import {
  describeErrno,
  escapeControls,
  isPathError,
  isPlumbError,
  PlumbError,
  type PlumbErrorCode,
} from "../../errors.js";
import type { DeploymentManifest } from "../../schema/manifest.js";
import { resolveInsideRoot } from "../inside-root.js";
import type { SourceFile } from "./source-digest.js";
import { insideGit, loadSourceFilter } from "./source-filter.js";
import type { LoadedManifest } from "../types.js";
import { hashSource, type SourceListing } from "./read-listed-files.js";
import { inodesOf, type Walk, walkSource } from "./source-walk.js";

// Reads the directory named by spec.source_path (I/O at the edge, like secret values): every regular
// file under it that may be uploaded (source-filter.ts), sorted, with what the digest and the tarball
// need. Bounded; a symlink must stay inside the directory and out of any `.git`. The digest (what
// decides "changed") and the upload come from this one list. The walk is source-walk.ts, the read
// of the files it listed read-listed-files.ts.

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
