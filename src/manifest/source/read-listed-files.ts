import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { comparePaths, type SourceFile, sourceHasher } from "./source-digest.js";

// The files a walk listed (source-walk.ts), read as they were listed, and their digest (source-tree.ts).

export type SourceListing = Array<{ path: string; size: number }>;
export type FoundFile = { path: string; real: string; mode: 0o644 | 0o755; size: number };

/** Sorted by path: the digest of the files' paths, modes and bytes (and the bytes, when asked for). */
export async function hashSource(
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
