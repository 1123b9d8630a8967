import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeErrno, fileError } from "../errors.js";
import { shapeCheck } from "../schema/validators.js";
import { readStateFileSync } from "./state-file.js";
import { type ObjectStatus, type StatusStore, emptyStatusStore, statusKey } from "./status-types.js";

export * from "./status-types.js";

/** Default status directory under the manifest root. */
export const DEFAULT_STATUS_DIR = ".plumb/status";

export const defaultStatusDir = (root: string): string => join(root, DEFAULT_STATUS_DIR);

/** Parses one record; returns a reason instead of throwing so one bad file never hides the rest. */

/** The record shape, compiled at build time (an interpreter was a third of loading 1,000 records). */
const recordProblems = shapeCheck("ObjectStatus");
export function parseObjectStatus(text: string): ObjectStatus | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which may be any file a symlink points at.
    return "not JSON";
  }
  const [first] = recordProblems(data);
  if (first !== undefined) return `not a status record: ${first.replace(": ", " ")}`;
  const record = data as ObjectStatus;
  // Stryker disable next-line ConditionalExpression: equivalent, deleting an absent seq changes nothing
  if (record.seq !== undefined && !trustedSeq(record.seq)) delete record.seq;
  return record;
}

/**
 * A record's write count is trusted only while the next one is still a safe integer: a file (any
 * file at a record's path: a commit's, one written by hand) saying 9007199254740991 or more made the
 * next write's number overflow (2^53 + 1 is 2^53: the count stopped counting, so an observation no
 * longer saw an apply made meanwhile). Such a record is read without one, as a record written before
 * counts were kept.
 */
// Stryker disable next-line EqualityOperator: equivalent, a count of 0 and none are read alike (every reader takes seq ?? 0)
export const trustedSeq = (seq: number): boolean => Number.isSafeInteger(seq + 1) && seq >= 0;

export const formatObjectStatus = (status: ObjectStatus): string => `${JSON.stringify(status, null, 2)}\n`;

/** A record is a few KB; a larger file in the store is not one (and is not read into memory whole). */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * One record's text: a regular file, opened without blocking (a FIFO blocked plan, apply and the
 * controller in its open for ever), not through a symlink (a record that points at another file
 * would show that file's start in the problem it makes, and could be /dev/zero), at most
 * MAX_RECORD_BYTES (state-file.ts).
 */
const readRecordFile = (file: string): string => readStateFileSync(file, MAX_RECORD_BYTES, "a record");

/**
 * Reads every `*.json` record under `dir`; a missing directory is an empty store. `ignored`: file
 * names not to trust, each with the reason reported (git/records/tracked-records.ts).
 */
export async function loadStatusStore(
  dir: string,
  ignored: ReadonlyMap<string, string> = new Map(),
): Promise<StatusStore> {
  const store = emptyStatusStore();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return store;
    throw fileError("status-unreadable", dir, error, STATUS_DIR_FIX);
  }
  // Stryker disable next-line MethodExpression: equivalent on Linux (Node 20 and 24): readdir lists names sorted (libuv scandir)
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const file = join(dir, name);
    const why = ignored.get(name);
    if (why !== undefined) {
      store.problems.push({ file, message: why });
      continue;
    }
    let text: string;
    try {
      // Synchronously: a store of 1,000 small records reads in a few ms this way, against ~100 ms
      // of thread-pool round trips (they also queue behind plan's scrypt checks).
      text = readRecordFile(file);
    } catch (error) {
      // A directory or an unreadable file where a record should be: reported and ignored, never trusted.
      store.problems.push({ file, message: `not readable: ${describeErrno(error)}` });
      continue;
    }
    const parsed = parseObjectStatus(text);
    if (typeof parsed === "string") store.problems.push({ file, message: parsed });
    else store.objects.set(statusKey(parsed.kind, parsed.name), parsed);
  }
  return store;
}

/**
 * Fails before anything is sent when records could not be written: creates the directory and
 * writes and removes a probe file (apply and adopt call it once they hold the lock).
 */
export async function checkStatusDirWritable(dir: string): Promise<void> {
  const probe = join(dir, `.plumb-probe-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, "");
    await rm(probe, { force: true });
  } catch (error) {
    throw fileError("status-write-failed", dir, error, STATUS_DIR_FIX);
  }
}

export const STATUS_DIR_FIX = "status records cannot live there: pass --status-dir to a writable directory";
