import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { asError } from "./errors.js";

// A small file plumb reads that anyone may have put there: a state file (a status record, the
// prune ledger, a lock's holder record, a replica's heartbeat: status/state-file.ts) or a setting
// (an Environment's `{file:}`, --api-key-file: api/setting-file.ts). Opened without blocking (not
// through a symlink unless `follow`), it must be a regular file of at most `limit` bytes, read one
// byte past the limit (a file growing after fstat is caught too). A FIFO blocked plan, apply and the
// controller for ever in its open (a thread-pool read never returns either), and /dev/zero behind a
// link was read into memory without end. The reason is said in words, never the content.

/** What kindOf asks of a file: its Stats, or the Dirent that listed it. */
export type FileKind = Pick<
  Stats,
  "isDirectory" | "isFIFO" | "isSocket" | "isCharacterDevice" | "isBlockDevice"
>;

/** Why a file was not read: what it is, never what it holds. */
export class FileRefused extends Error {}

/** How to read: `what` the file should be ("a record"), for the reasons; `follow` a final symlink. */
export type RegularFile = { limit: number; what: string; follow?: boolean };

const flagsOf = (follow: boolean | undefined) =>
  constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (follow ? 0 : (constants.O_NOFOLLOW ?? 0));

/** 65536 → "64 KiB", 1048576 → "1 MiB", else bytes. */
function sizeOf(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** What a file that is not a regular one is, in words ("a FIFO (named pipe)"); Stats or a Dirent. */
export function kindOf(stats: FileKind): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** `what`: what the file should be ("a record"), for the reasons. */
const opened = (what: string) => (error: unknown) => {
  if ((error as NodeJS.ErrnoException).code === "ELOOP")
    return new FileRefused(`a symbolic link, not ${what}`, { cause: error });
  return asError(error);
};

const tooLarge = (limit: number, what: string) =>
  new FileRefused(`larger than ${sizeOf(limit)}, not ${what}`);

/**
 * The bytes read so far, in a buffer of the file's size and one byte more (a record is read in
 * one call, no 1 MiB buffer per record), grown up to `limit` + 1 if the file grows meanwhile.
 */
class BoundedText {
  buffer: Buffer;
  length = 0;
  constructor(
    stats: Stats,
    private readonly limit: number,
    private readonly what: string,
  ) {
    if (!stats.isFile()) throw new FileRefused(`${kindOf(stats)}, not a regular file`);
    if (stats.size > limit) throw tooLarge(limit, what);
    this.buffer = Buffer.alloc(stats.size + 1);
  }

  /** The bytes the next read may fill (call before reading: it may grow the buffer). */
  room(): number {
    if (this.length < this.buffer.length) return this.buffer.length - this.length;
    if (this.length > this.limit) throw tooLarge(this.limit, this.what);
    this.buffer = Buffer.concat([this.buffer], this.limit + 1);
    return this.buffer.length - this.length;
  }

  /** Counts `n` bytes read; false at the end of the file. */
  add(n: number): boolean {
    this.length += n;
    return n !== 0;
  }

  toString(): string {
    return this.buffer.toString("utf8", 0, this.length);
  }
}

/** The text of `path`, a regular file of at most `limit` bytes; throws FileRefused or fs's error. */
export function readRegularFileSync(path: string, { limit, what, follow }: RegularFile): string {
  let fd: number;
  try {
    fd = openSync(path, flagsOf(follow));
  } catch (error) {
    throw opened(what)(error);
  }
  try {
    const text = new BoundedText(fstatSync(fd), limit, what);
    for (let room = text.room(); text.add(readSync(fd, text.buffer, text.length, room, null));)
      room = text.room();
    return text.toString();
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync on the thread pool. */
export async function readRegularFile(path: string, { limit, what, follow }: RegularFile): Promise<string> {
  const handle = await open(path, flagsOf(follow)).catch((error: unknown) =>
    Promise.reject(opened(what)(error)),
  );
  try {
    const text = new BoundedText(await handle.stat(), limit, what);
    for (
      let room = text.room();
      text.add((await handle.read(text.buffer, text.length, room, null)).bytesRead);
    )
      room = text.room();
    return text.toString();
  } finally {
    await handle.close();
  }
}
