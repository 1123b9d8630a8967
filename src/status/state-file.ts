import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { asError } from "../errors.js";

// A file plumb keeps in its state directory (a status record, the prune ledger, a lock's holder
// record, a controller replica's heartbeat) read back: anyone who can write the directory can put
// anything there. Opened without blocking, not through a symlink, it must be a regular file of at
// most `limit` bytes, read one byte past the limit (a file growing after fstat is caught too). A
// FIFO there blocked plan, apply and the controller for ever in its open (a thread-pool read never
// returns either), and /dev/zero behind a link was read into memory without end. The same rule as
// an Environment's setting files (api/setting-file.ts), with the reason in words, never the content.

/** Why a state file was not read: what it is, never what it holds. */
class StateFileRefused extends Error {}

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** `what`: what the file should be ("a record"), for the reasons. */
const opened = (what: string) => (error: unknown) => {
  if ((error as NodeJS.ErrnoException).code === "ELOOP")
    return new StateFileRefused(`a symbolic link, not ${what}`, { cause: error });
  return asError(error);
};

const tooLarge = (limit: number, what: string) =>
  new StateFileRefused(`larger than ${limit} bytes, not ${what}`);

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
    if (!stats.isFile()) throw new StateFileRefused(`${kindOf(stats)}, not a regular file`);
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

/** The text of `path`, a regular file of at most `limit` bytes; throws StateFileRefused or fs's error. */
export function readStateFileSync(path: string, limit: number, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
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

/** readStateFileSync on the thread pool. */
export async function readStateFile(path: string, limit: number, what: string): Promise<string> {
  const handle = await open(path, FLAGS).catch((error: unknown) => Promise.reject(opened(what)(error)));
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

/** A lock's or a replica's record: a few hundred bytes. */
export const MAX_HOLDER_BYTES = 64 * 1024;
