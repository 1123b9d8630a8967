import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describeErrno, fileError } from "../errors.js";
import { shapeCheck } from "../schema/validators.js";
import { readStateFile, readStateFileSync } from "./state-file.js";
import {
  type ObjectStatus,
  type StatusStore,
  emptyStatusStore,
  statusFileName,
  statusKey,
} from "./status-types.js";

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
const trustedSeq = (seq: number): boolean => Number.isSafeInteger(seq + 1) && seq >= 0;

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
 * Temp file, data fsync, rename, directory fsync: a reader sees the old record or the new one,
 * never half of one, and a power loss after it returns keeps the new one.
 * Not write-file-atomic: it resolves the target's real path first (fs.realpath's JS walk, an
 * lstat per path component) and chmods and stats; with three records per object that was most
 * of the controller's file work at 10,000 objects. Status files are ours and never symlinks.
 * A temp file left by a kill -9 ends in `.tmp` and is ignored by loadStatusStore (*.json only).
 */
async function writeRecordFile(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  // Owner-only: a record holds salted fingerprints of secret values (docs/security.md).
  const handle = await open(temp, "wx", 0o600);
  try {
    try {
      await handle.writeFile(text, "utf8");
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    // A full disk fails every later write too (each apply, each reconcile): none leaves its file.
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dirname(file));
}

/**
 * A rename is durable only once its directory is: without this fsync a power loss can forget it
 * (the old record, or none, comes back). Windows cannot open a directory to sync it.
 */
async function syncDirectory(dir: string): Promise<void> {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: equivalent off Windows, where the tests run
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The record a file holds now; null when there is none (or it cannot be read as one). */
async function currentRecord(file: string): Promise<ObjectStatus | null> {
  // Stryker disable next-line ArrowFunction: equivalent, undefined is then not JSON (parsed below): null all the same
  const text = await readStateFile(file, MAX_RECORD_BYTES, "a record").catch(() => null);
  // Stryker disable next-line ConditionalExpression: equivalent, as above
  if (text === null) return null;
  const parsed = parseObjectStatus(text);
  return typeof parsed === "string" ? null : parsed;
}

const appliedTime = (record: ObjectStatus): number =>
  record.applied_at ? Date.parse(record.applied_at) || 0 : 0;

/**
 * What a writer's record becomes over the one the file holds: the next sequence number, and, when
 * the file holds a later apply than the writer knew of (a slow writer), that apply's fields kept
 * (digest, fingerprints, applied spec, upload), so an older writer never erases a newer secret change.
 * Both only from the store's own record (`own`, asked when the file's number or fields would count):
 * a file a commit put at the record's path is anyone's; its fingerprints kept would stop the next
 * apply from sending a changed secret, and its number continued would make every later write count
 * from whatever the commit says.
 */
async function nextRecord(
  status: ObjectStatus,
  current: ObjectStatus | null,
  isOwn: () => Promise<boolean>,
): Promise<ObjectStatus> {
  const mine = status.seq !== undefined && trustedSeq(status.seq) ? status.seq : 0;
  const ahead = current !== null && (current.seq ?? 0) > mine;
  const seq = (ahead && (await isOwn()) ? current.seq! : mine) + 1;
  if (!current || appliedTime(current) <= appliedTime(status)) return { ...status, seq };
  if (!(await isOwn())) return { ...status, seq };
  return {
    ...status,
    git_commit: current.git_commit,
    manifest_digest: current.manifest_digest,
    secret_fingerprints: current.secret_fingerprints,
    applied_spec: current.applied_spec ?? null,
    applied_at: current.applied_at ?? null,
    ...(current.source_upload ? { source_upload: current.source_upload } : {}),
    seq,
  };
}

async function writeRecord(dir: string, file: string, status: ObjectStatus): Promise<void> {
  const write = () => writeRecordFile(file, formatObjectStatus(status));
  try {
    await write().catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
      await mkdir(dir, { recursive: true });
      await write();
    });
  } catch (error) {
    throw fileError("status-write-failed", file, error, STATUS_DIR_FIX);
  }
}

/**
 * Whether the file named `name` in the store is the store's own record, not one git tracks (a
 * commit put it there): git/status-source.ts's saveOwnObjectStatus asks git. Every write and removal
 * takes one: a store in a git checkout can hold a commit's file at a record's path, and a writer
 * that forgot to ask would take its fields and number or delete it. Trusting every file is said
 * where it is meant (anyFile).
 */
export type OwnFile = (name: string) => Promise<boolean>;

/**
 * Every file at a record's path is the store's own, unasked: only for a store git never tracks
 * (the displaced records in a checkout's git directory) or a write-back over a path git has just
 * said it no longer tracks (controller/displaced-records.ts), and for tests' fixtures.
 */
export const anyFile: OwnFile = () => Promise.resolve(true);

/** `own`'s answer for `name`, asked at most once. */
const askedOnce = (own: OwnFile, name: string): (() => Promise<boolean>) => {
  let answer: Promise<boolean> | undefined;
  return () => (answer ??= own(name));
};

/**
 * Writes one record atomically (writeRecordFile) as the next of its sequence (nextRecord). The
 * directory is created when a write finds it missing, not before every write (apply and the
 * controller write up to three records per object). `own`: asked before a later apply's fields or
 * number are kept from the file there.
 */
export async function saveObjectStatus(dir: string, status: ObjectStatus, own: OwnFile): Promise<string> {
  const name = statusFileName(status.kind, status.name);
  const file = join(dir, name);
  await writeRecord(dir, file, await nextRecord(status, await currentRecord(file), askedOnce(own, name)));
  return file;
}

/**
 * An observation (`status`, `drift`): written only when the file holds no newer record than the one
 * it was made from (sequence `base`; null: made from no record). Otherwise someone wrote meanwhile
 * (an apply): the observation is dropped, and the record written stays. Returns whether it was written.
 * `own` is asked before dropping it: a file that is not the store's own (git tracks it: a commit's,
 * never read as a record) holds no newer record, whatever number it says.
 */
export async function saveObservedStatus(
  dir: string,
  status: ObjectStatus,
  base: number | null,
  own: OwnFile,
): Promise<boolean> {
  const name = statusFileName(status.kind, status.name);
  const file = join(dir, name);
  let current = await currentRecord(file);
  const newer = (record: ObjectStatus | null) => record && (base === null || (record.seq ?? 0) > base);
  if (newer(current) && !(await own(name))) current = null;
  if (newer(current)) return false;
  await writeRecord(dir, file, { ...status, seq: Math.max(current?.seq ?? 0, base ?? 0) + 1 });
  return true;
}

/**
 * Removes a record an observation found gone, unless a newer record was written meanwhile
 * (saveObservedStatus). `own` is asked first when a file is there: a file that is not the store's
 * own record (git tracks it: a commit's, a user's file) is neither compared nor deleted, whatever it
 * says; the record removed was not in it (its load said the file is ignored).
 */
export async function removeObservedStatus(
  dir: string,
  status: ObjectStatus,
  own: OwnFile,
): Promise<boolean> {
  const name = statusFileName(status.kind, status.name);
  const file = join(dir, name);
  if (!(await exists(file))) return true;
  if (!(await own(name))) return true;
  const current = await currentRecord(file);
  if (current && (current.seq ?? 0) > (status.seq ?? 0)) return false;
  await rm(file, { force: true });
  return true;
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

const STATUS_DIR_FIX = "status records cannot live there: pass --status-dir to a writable directory";

/**
 * Removes an object's record (it is no longer managed). Missing files are fine. `own` is asked when
 * a file is there: one that is not the store's own record (git tracks it) is not deleted.
 */
export async function removeObjectStatus(
  dir: string,
  kind: string,
  name: string,
  own: OwnFile,
): Promise<void> {
  const file = join(dir, statusFileName(kind, name));
  if ((await exists(file)) && !(await own(statusFileName(kind, name)))) return;
  await rm(file, { force: true });
}

/** Whether anything is at `file` (not followed through a symlink). */
const exists = (file: string): Promise<boolean> =>
  lstat(file).then(
    () => true,
    () => false,
  );
