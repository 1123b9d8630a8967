import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../logger.js";
import {
  loadStatus,
  ownRecordsIn,
  publishStatus,
  type RecordWriter,
  resolveStatusDir,
  type StatusLocation,
} from "../git/status-source.js";
import { formatObjectStatus, loadStatusStore } from "../status/status-store.js";
import { type ObjectStatus, statusFileName, statusKey } from "../status/status-types.js";
import { trackedRecords } from "../git/records/tracked-records.js";
import { errorMessage } from "./error-message.js";
import type { DisplacedRecords } from "./displaced-records.js";
import type { PushFence } from "../git/fenced-push.js";
import { type GitStop, GitStopped } from "../git/stoppable-git.js";
import { lapsedWhileStopping } from "../lock/index.js";
import type { Timers } from "./queue/work-queue.js";

// The controller's status records: in memory for /status and metrics, each written atomically to
// the status directory as soon as it is known (kill -9 loses nothing recorded), and, with
// --status-branch, published to git a little later in batches. A record that says what the last one
// said (an in-sync reconcile: only its time differs) is not written at all: `updated_at` is when the
// record last changed (docs/status.md), as `drift` and `status` keep it. At a restart over 10,000
// objects that is 10,000 fewer files written and records replaced in memory.

export type StatusBook = {
  statuses: ReadonlyMap<string, ObjectStatus>;
  /** An object's record, or, not yet moved, its record in the older layout (StatusBookOptions.legacy). */
  recorded: (key: string) => ObjectStatus | undefined;
  /** Keeps and writes a record, unless it says what the one kept says (sameRecord): then nothing. */
  record: (status: ObjectStatus) => Promise<void>;
  /** Drops an object's record (it was pruned): memory, file, and the status branch later. */
  forget: (kind: string, name: string) => Promise<void>;
  /** Publishes what is pending to the status branch now and waits for every publish (shutdown). */
  flush: () => Promise<void>;
  /**
   * After the checkout moved to a new commit: says each record git now tracks in the store (a
   * commit brought it). The store is read only at start, so no such record is trusted while the
   * controller runs; the next start ignores it (or, when git cannot answer, refuses to start).
   */
  checkTracked: () => Promise<void>;
};

export type StatusBookOptions = {
  /** Where status lives; its gitEnv (credentials) is used for the status branch. */
  location: StatusLocation;
  /**
   * Where older controllers kept it (legacyStatusLocation): its records of objects `location` does not
   * hold are read, and each moved to `location` at its first write (only objects of these manifests
   * are written, so only they move).
   */
  legacy?: StatusLocation | undefined;
  timers: Timers;
  log: Logger;
  /** Quiet time that batches records into one status-branch commit. */
  publishDelayMs?: number;
  /** Called with the key of every record written or forgotten (the status page's live updates). */
  onChange?: (key: string) => void;
  /**
   * The state lock's fence (StateLock.assertHeld): throws lock-lost once the lease lapsed. A
   * controller that lost the lock writes no record and publishes nothing.
   */
  fence?: () => void;
  /** The same lock's hold on status-branch pushes (with a lease: swapped in the same atomic push). */
  pushFence?: PushFence;
  /**
   * Where the controller keeps its own records whose path in the store a commit took (a git
   * checkout's store, displaced-records.ts); without it they are kept in memory only.
   */
  displaced?: DisplacedRecords | undefined;
};

export async function openStatusBook(options: StatusBookOptions): Promise<StatusBook> {
  const { location, log } = options;
  const statuses = new Map<string, ObjectStatus>();
  const statusDir = resolveStatusDir(location);
  const loaded = await loadStatus(location);
  for (const problem of loaded.problems)
    log.warn({ file: problem.file, reason: problem.message }, "ignoring status file");
  for (const [key, status] of loaded.objects) statuses.set(key, status);
  const own = await ownRecords(statusDir, statuses, options.displaced);
  // With a status branch, records read from the branch may have no file here (a new checkout): each
  // is written at its first record even when it says the same, or the next publish, which mirrors
  // this directory, would take it off the branch.
  const onDisk = location.statusBranch ? new Set(await readdir(statusDir).catch(() => [])) : undefined;
  // The older layout's store, written through one writer (git's answer kept for the book's life).
  const legacyStore = options.legacy && ownRecordsIn(resolveStatusDir(options.legacy));
  const legacy =
    options.legacy && legacyStore
      ? await loadLegacy(options.legacy, legacyStore, statuses, log)
      : new Map<string, ObjectStatus>();
  let moved = false;

  const fence = options.fence ?? (() => undefined);
  const pushFence = options.pushFence ?? { check: fence };
  let cancelPublish: (() => void) | undefined;
  let publishing: Promise<void> = Promise.resolve();
  const publish = () => {
    cancelPublish = undefined;
    publishing = publishing
      // Checked again immediately before the push (status/fenced-push.ts).
      .then(() => publishStatus(location, "plumb controller: status", pushFence, own.text))
      // The older layout on the branch loses what moved (it mirrors its directory, which keeps the rest).
      .then(() => {
        if (!moved || !options.legacy) return null;
        moved = false;
        // As the current layout: a file a commit put at the path of a record still there is not it.
        return publishStatus(options.legacy, "plumb controller: status moved", pushFence, (file) => {
          const status = recordNamed(legacy, file);
          return status && formatObjectStatus(status);
        });
      })
      .then(
        () => undefined,
        (error: unknown) => sayNotPublished(log, location, error, "push"),
      );
    return publishing;
  };

  // Records that change within the quiet time go to the status branch in one commit.
  const publishSoon = () => {
    if (location.statusBranch && !cancelPublish)
      cancelPublish = options.timers.setTimeout(() => void publish(), options.publishDelayMs ?? 2_000);
  };

  return {
    statuses,
    recorded: (key) => statuses.get(key) ?? legacy.get(key),
    async record(status) {
      fence();
      const key = statusKey(status.kind, status.name);
      const kept = statuses.get(key);
      const file = statusFileName(status.kind, status.name);
      if (kept && sameRecord(kept, status) && (!onDisk || onDisk.has(file))) return;
      statuses.set(key, status);
      await own.save(status);
      onDisk?.add(file);
      if (legacy.delete(key) && legacyStore) {
        await legacyStore.removeOwnObjectStatus(status.kind, status.name);
        moved = true;
      }
      options.onChange?.(key);
      publishSoon();
    },
    async forget(kind, name) {
      fence();
      statuses.delete(statusKey(kind, name));
      await own.remove(kind, name);
      onDisk?.delete(statusFileName(kind, name));
      options.onChange?.(statusKey(kind, name));
      publishSoon();
    },
    checkTracked: trackedChecker(statusDir, new Set(loaded.problems.map((p) => p.file)), log, own),
    async flush() {
      cancelPublish?.();
      // After losing the lock, the branch is the new leader's: this store is stale, never pushed.
      const lost = location.statusBranch ? failureOf(fence) : undefined;
      if (location.statusBranch && !lost) await publish();
      else if (lost) sayNotPublished(log, location, lost, "fence");
      await publishing;
    },
  };
}

/**
 * The names git tracks in the store (a commit put a file at a record's path; the checkout's reset
 * wrote it over this controller's record): such a file is the commit's, never read as a record nor
 * written over. The controller's own record is kept in memory and, with `displaced`, in the
 * checkout's git directory (read back at start: displaced-records.ts), published from memory (text),
 * and written back to the store when a later commit takes the file away (untracked, from checkTracked).
 */
async function ownRecords(
  statusDir: string,
  statuses: Map<string, ObjectStatus>,
  displaced: DisplacedRecords | undefined,
) {
  const answer = await trackedRecords(statusDir).catch(() => undefined);
  const tracked = new Set(answer?.keys());
  const store = ownRecordsIn(statusDir); // git's answer kept by this book, for its store
  await displaced?.restore(answer && tracked, statuses);
  // Also a file git tracks already that checkTracked has not said yet: a write between the reset to
  // a pulled commit and that check wrote over the commit's file in the working tree. git's answer is
  // the one kept until its index changes (trackedRecordsNow: a stat of the index per write), and the
  // reset writes a new index; when git cannot say, the store as before (checkTracked logs that).
  const trackedNow = (file: string) =>
    store.trackedRecordsNow().then(
      (now) => now.has(file),
      () => false,
    );
  const away = async (file: string) =>
    displaced !== undefined && (tracked.has(file) || (await trackedNow(file)));
  return {
    tracked,
    text: (file: string) => {
      const status = recordNamed(statuses, file);
      return status && formatObjectStatus(status);
    },
    save: async (status: ObjectStatus) => {
      if (await away(statusFileName(status.kind, status.name))) await displaced!.save(status);
      else await store.saveOwnObjectStatus(status);
    },
    remove: async (kind: string, name: string) => {
      const file = statusFileName(kind, name);
      if (await away(file)) await displaced!.remove(file);
      else await store.removeOwnObjectStatus(kind, name); // a --dir store: a file git tracks stays
    },
    /** A commit now has a file at the record's path: the record is kept away from it from now on. */
    tracks: async (file: string) => {
      const status = recordNamed(statuses, file);
      if (status) await displaced?.save(status);
    },
    untracked: async (file: string) => {
      const status = recordNamed(statuses, file);
      if (status && displaced) await displaced.writeBack(status);
      // A --dir or --status-dir store: asked again, in case a commit took the path back meanwhile.
      else if (status) await store.saveOwnObjectStatus(status);
      else await displaced?.remove(file);
    },
  };
}

/** What `check` threw (undefined when it returned). */
function failureOf(check: () => void): unknown {
  try {
    check();
    return undefined;
  } catch (error) {
    return error ?? new Error("failed");
  }
}

/**
 * Told to stop, the controller could not publish because the git remote stopped answering: the lease
 * lapsed for it (lapsedWhileStopping), or a push ran out after the stop (GitStopped). Not a lock
 * lost: no one took it, and the last status is in the status directory (sayNotPublished).
 */
const unansweredAtStop = (error: unknown, gitStop: GitStop | undefined): boolean =>
  lapsedWhileStopping(error, gitStop) ||
  (gitStop?.signal.aborted === true &&
    gitStop.unanswered &&
    (error instanceof GitStopped || (error instanceof Error && error.cause instanceof GitStopped)));

/** Why a publish was not made: by the lock's fence before it, or at its push (git's failure or the fence's). */
function sayNotPublished(log: Logger, location: StatusLocation, error: unknown, at: "fence" | "push"): void {
  if (unansweredAtStop(error, location.gitStop))
    log.warn(
      { status_dir: resolveStatusDir(location) },
      "status branch not published: the git remote did not answer after the stop; the last status is in the status directory",
    );
  else if (at === "fence") log.warn({}, "lost the state lock: status branch not published");
  else log.error({ err: errorMessage(error) }, "status branch not published");
}

/** The record kept whose file is named `file` (`deployment.NAME.json`). */
function recordNamed(statuses: ReadonlyMap<string, ObjectStatus>, file: string): ObjectStatus | undefined {
  for (const status of statuses.values())
    if (statusFileName(status.kind, status.name) === file) return status;
  return undefined;
}

/**
 * Says each record git tracks in `statusDir` that was not said yet (StatusBook.checkTracked), keeps
 * `names.tracked` the names git tracks now, and hands each name git tracks newly to `names.tracks`
 * and each it no longer tracks to `names.untracked`.
 */
function trackedChecker(
  statusDir: string,
  said: Set<string>,
  log: Logger,
  names: {
    tracked: Set<string>;
    tracks: (file: string) => Promise<void>;
    untracked: (file: string) => Promise<void>;
  },
): () => Promise<void> {
  return async () => {
    const now = await trackedRecords(statusDir).catch((error: unknown) => {
      log.error(
        { err: errorMessage(error) },
        "status records not checked against git: none a commit brings is read while this controller runs; its next start refuses until git answers",
      );
      return undefined;
    });
    if (!now) return;
    const gone = [...names.tracked].filter((name) => !now.has(name));
    const come = [...now.keys()].filter((name) => !names.tracked.has(name));
    names.tracked.clear();
    for (const name of now.keys()) names.tracked.add(name);
    for (const name of come) await names.tracks(name);
    for (const name of gone) {
      said.delete(join(statusDir, name));
      await names.untracked(name);
    }
    for (const [name, reason] of now) {
      const file = join(statusDir, name);
      if (said.has(file)) continue;
      said.add(file);
      log.warn({ file, reason }, "ignoring status file");
    }
  };
}

/**
 * Whether `next` says what `kept` says: equal but for when it was written (`updated_at`) and its
 * file's write count (`seq`, which records built in memory do not carry).
 */
export function sameRecord(kept: ObjectStatus, next: ObjectStatus): boolean {
  const { updated_at: _keptAt, seq: _keptSeq, ...keptRest } = kept;
  const { updated_at: _nextAt, seq: _nextSeq, ...nextRest } = next;
  return isDeepStrictEqual(keptRest, nextRest);
}

/**
 * The records of the older layout (a failure to read them is logged: they are then not moved). Its
 * directory is read as the current one is: a file git tracks there is the commit's, never a record
 * (tracked-records.ts), never written over; the record of its name is published from memory.
 */
async function loadLegacy(
  location: StatusLocation,
  writer: RecordWriter,
  current: ReadonlyMap<string, ObjectStatus>,
  log: Logger,
): Promise<Map<string, ObjectStatus>> {
  const dir = resolveStatusDir(location);
  const tracked = await trackedRecords(dir).catch(() => undefined);
  const [store, local] = await Promise.all([
    loadStatus(location).catch((error: unknown) => {
      log.warn({ err: errorMessage(error) }, "status in the older layout not read");
      return null;
    }),
    tracked ? loadStatusStore(dir, tracked).catch(() => null) : null,
  ]);
  // Objects recorded in the new place already moved (a record there always wins).
  for (const key of current.keys()) store?.objects.delete(key);
  if (!store || store.objects.size === 0) return new Map<string, ObjectStatus>();
  log.info(
    { records: store.objects.size },
    "status found in the older layout: moving it beside the manifests",
  );
  // Its directory holds every record read (some came from the branch), so publishing it later
  // removes from the branch only the records that moved.
  for (const [key, record] of store.objects)
    if (!local?.objects.has(key) && !tracked?.has(statusFileName(record.kind, record.name)))
      await writer.saveOwnObjectStatus(record);
  return store.objects;
}
