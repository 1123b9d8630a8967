import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, relative, sep } from "node:path";
import { describeErrno } from "../../errors.js";
import { type FileKind, kindOf } from "../../regular-file.js";
import type { Problem } from "../types.js";
import { decodeManifestBytes, parseManifestText, type ParseResult, problemAt, tooLarge } from "./parse.js";

/** A manifest file: the path shown (under the root) and the real path read (symlinks resolved). */
export type YamlFile = { path: string; real: string };

/**
 * A path under the manifest root as results show it: relative, with forward slashes. Listed paths
 * are `join(base, ...)`, normalised: cut the prefix (path.relative cost ~5 µs per file, twice per
 * file of a 10,000-file load); anything else goes through path.relative.
 */
export function toRelative(base: string, path: string): string {
  const under = path.length > base.length + 1 && path.startsWith(base) && path[base.length] === sep;
  const cut = under && !base.endsWith(sep) ? path.slice(base.length + 1) : relative(base, path);
  return (sep === "/" ? cut : cut.split(sep).join("/")) || basename(path);
}

export const inside = (realBase: string, real: string) =>
  real === realBase || (real.startsWith(realBase) && real.startsWith(sep, realBase.length));

// O_NOFOLLOW: a file listed as plain that became a symlink since is refused, not followed out of the root.
// O_NONBLOCK: a FIFO (one named as PATH, or put where a listed file was) is opened without waiting
// for a writer, and then refused as not a regular file: a blocking open waited for ever.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

const atStart = (file: string) => ({ file, line: 1, column: 1 });

/**
 * A YAML file, directory or symlink of the tree that cannot be read (`manifest-unreadable`): an
 * error, since its objects would otherwise look removed to prune, which then stops.
 */
export function unreadableProblem(file: string, error: unknown, what = "file"): Problem {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === "ENOENT"
      ? "was removed while plumb read the tree: run again"
      : code === "ELOOP"
        ? "became a symlink while plumb read the tree: run again"
        : `${describeErrno(error)}: its manifests are not loaded; check its permissions`;
  return problemAt(atStart(file), "error", "manifest-unreadable", "", `${what} cannot be read: ${why}`);
}

/** A `*.yaml` entry that is a FIFO, a socket or a device (`not-regular-file`): never opened, never read. */
export const notRegularProblem = (file: string, stats: FileKind): Problem =>
  problemAt(
    atStart(file),
    "warning",
    "not-regular-file",
    "",
    `${kindOf(stats)}, not a regular file: skipped, not read; a manifest must be a regular file`,
  );

const statOf = (path: string) => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

/** The caller asked to be told, not given the text, of a file this large (loadManifestsInSlices). */
export const OFF_THREAD = Symbol("off-thread");

/**
 * Reads one manifest's text synchronously: 10,000 small files cost ~4 syscalls each this way,
 * against ~7 thread-pool round trips each with fs/promises (4-5x slower in bench/validate.bench.ts).
 * A file that cannot be a manifest (outside the root, too large, not UTF-8) is answered with its
 * problem instead of its text.
 */
export function readManifestText(
  { path, real }: YamlFile,
  base: string,
  realBase: string,
  maxBytes: number,
  offThreadOver = Infinity,
): { file: string; text: string } | ParseResult | typeof OFF_THREAD {
  const file = toRelative(base, path);
  if (!inside(realBase, real)) {
    const message = "file is a symlink that points outside the manifest root";
    return {
      documents: [],
      problems: [problemAt({ file, line: 1, column: 1 }, "error", "symlink-outside-root", "", message)],
    };
  }
  const failed = (problem: Problem) => ({ documents: [], problems: [problem] });
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (error) {
    // A socket cannot be opened at all (ENXIO): one put where a listed file was, or named as PATH.
    const socket = (error as NodeJS.ErrnoException).code === "ENXIO" ? statOf(real) : undefined;
    return failed(socket ? notRegularProblem(file, socket) : unreadableProblem(file, error));
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return failed(notRegularProblem(file, stats));
    const size = stats.size;
    if (size > maxBytes) return { documents: [], problems: [tooLarge(file, size, maxBytes)] };
    if (size > offThreadOver) return OFF_THREAD;
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    const decoded = decodeManifestBytes(bytes.subarray(0, read), file, maxBytes);
    return "problem" in decoded ? failed(decoded.problem) : { file, text: decoded.text };
  } catch (error) {
    return failed(unreadableProblem(file, error)); // EIO, or a read refused
  } finally {
    closeSync(fd);
  }
}

/** One file read and parsed on this thread (`offThreadOver` as readManifestText). */
export function readAndParse(
  file: YamlFile,
  base: string,
  realBase: string,
  maxBytes: number,
  offThreadOver = Infinity,
): ParseResult | typeof OFF_THREAD {
  const read = readManifestText(file, base, realBase, maxBytes, offThreadOver);
  if (typeof read === "symbol" || !("text" in read)) return read;
  return parseManifestText(read.text, read.file);
}
