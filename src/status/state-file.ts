import { readRegularFile, readRegularFileSync } from "../regular-file.js";

// A file plumb keeps in its state directory (a status record, the prune ledger, a lock's holder
// record, a controller replica's heartbeat) read back: anyone who can write the directory can put
// anything there. A regular file of at most `limit` bytes, opened without blocking and not through
// a symlink (regular-file.ts).

/** The text of the state file at `path`; throws FileRefused (the reason in words) or fs's error. */
export const readStateFileSync = (path: string, limit: number, what: string): string =>
  readRegularFileSync(path, { limit, what });

/** readStateFileSync on the thread pool. */
export const readStateFile = (path: string, limit: number, what: string): Promise<string> =>
  readRegularFile(path, { limit, what });

/** A lock's or a replica's record: a few hundred bytes. */
export const MAX_HOLDER_BYTES = 64 * 1024;
