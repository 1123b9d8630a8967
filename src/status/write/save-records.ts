import { lstat, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileError } from "../../errors.js";
import { readStateFile } from "../state-file.js";
import { type ObjectStatus, statusFileName } from "../status-types.js";
import {
  formatObjectStatus,
  MAX_RECORD_BYTES,
  parseObjectStatus,
  STATUS_DIR_FIX,
  trustedSeq,
} from "../status-store.js";
import { writeRecordFile } from "./write-atomically.js";

// Writes and removals of the records of a status store (status-store.ts reads them): each write the
// next of its record's sequence, an observation only over no newer record, and never over or of a
// file that is not the store's own (OwnFile).

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
 * commit put it there): git/status/status-source.ts's saveOwnObjectStatus asks git. Every write and removal
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
