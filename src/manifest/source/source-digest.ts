import { createHash } from "node:crypto";

// The content identity of an internal_source directory (spec.source_path). Pure: the files are read
// at the edge (src/manifest/source/source-tree.ts); plan compares this digest with the one recorded after
// the last upload, so an unchanged directory is never uploaded again.

/** One regular file of a source directory: path relative to it ('/' separators), normalised mode, bytes. */
export type SourceFile = { path: string; mode: 0o644 | 0o755; bytes: Uint8Array };

const VERSION = "plumb-source-v1";

/** Byte-wise order of paths, so the digest does not depend on the file system's listing order. */
export const comparePaths = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * `sha256:<hex>` over "plumb-source-v1\0" then, for each file sorted by path, "PATH\0MODE\0SIZE\0"
 * (MODE octal: 644 or 755, git's view of a mode) followed by the bytes. The size prefix keeps the
 * stream unambiguous; timestamps, owners and empty directories are not content.
 */
export function digestSource(files: readonly SourceFile[]): string {
  const hasher = sourceHasher();
  for (const file of [...files].sort((a, b) => comparePaths(a.path, b.path))) hasher.add(file);
  return hasher.digest();
}

/** The same digest fed one file at a time, in path order (so a reader need not hold every file). */
export function sourceHasher(): { add(file: SourceFile): void; digest(): string } {
  const hash = createHash("sha256").update(`${VERSION}\0`);
  return {
    add(file) {
      hash.update(`${file.path}\0${file.mode.toString(8)}\0${file.bytes.length}\0`);
      hash.update(file.bytes);
    },
    digest: () => `sha256:${hash.digest("hex")}`,
  };
}

/** A digest shortened for display: `sha256:` and 12 hex digits, then an ellipsis. */
export const shortDigest = (digest: string): string =>
  digest.startsWith("sha256:") && digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
