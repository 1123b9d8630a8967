import { readdir } from "node:fs/promises";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../logger.js";
import {
  loadStatus,
  manifestDirOf,
  ownRecordsIn,
  publishStatus,
  resolveStatusDir,
  type StatusLocation,
} from "../git/status/status-source.js";
import { manifestRootOf } from "../status/manifest-root.js";
import { formatObjectStatus } from "../status/status-store.js";
import { type ObjectStatus, statusFileName, statusKey } from "../status/status-types.js";
import type { DisplacedRecords } from "./displaced-records.js";
import type { PushFence } from "../git/fenced-push.js";
import type { Timers } from "./queue/work-queue.js";
import { ownRecords, recordNamed, trackedChecker } from "./status-book/own-records.js";
import { failureOf, sayNotPublished } from "./status-book/publish-failure.js";
import { loadLegacy } from "./status-book/legacy-layout.js";

// The controller's status records: in memory for /status and metrics, each written atomically to
// the status directory as soon as it is known (kill -9 loses nothing recorded), and, with
// --status-branch, published to git a little later in batches. A record that says what the last one
// said (an in-sync reconcile: only its time differs) is not written at all: `updated_at` is when the
// record last changed (docs/status.md), as `drift` and `status` keep it. At a restart over 10,000
// objects that is 10,000 fewer files written and records replaced in memory. Its parts are in
// status-book/: its own records beside the files git tracks, why a publish was not made, and the
// records of the older layout.

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
  const root = manifestRootOf(manifestDirOf(location.root));
  const own = await ownRecords(statusDir, statuses, options.displaced, root);
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
 * Whether `next` says what `kept` says: equal but for when it was written (`updated_at`) and its
 * file's write count (`seq`, which records built in memory do not carry).
 */
export function sameRecord(kept: ObjectStatus, next: ObjectStatus): boolean {
  const { updated_at: _keptAt, seq: _keptSeq, ...keptRest } = kept;
  const { updated_at: _nextAt, seq: _nextSeq, ...nextRest } = next;
  return isDeepStrictEqual(keptRest, nextRest);
}
