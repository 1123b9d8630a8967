import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { basename, relative, sep } from "node:path";
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
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

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
  const fd = openSync(real, OPEN_FLAGS);
  try {
    const size = fstatSync(fd).size;
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
    return "problem" in decoded
      ? { documents: [], problems: [decoded.problem] }
      : { file, text: decoded.text };
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
