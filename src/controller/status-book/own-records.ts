import { join } from "node:path";
import type { Logger } from "../../logger.js";
import { ownRecordsIn } from "../../git/status/status-source.js";
import { formatObjectStatus } from "../../status/status-store.js";
import { type ObjectStatus, statusFileName } from "../../status/status-types.js";
import { trackedRecords } from "../../git/records/tracked-records.js";
import { errorMessage } from "../error-message.js";
import type { DisplacedRecords } from "../displaced-records.js";

// The status book's own records beside the files git tracks in its store (status-book.ts).

/**
 * The names git tracks in the store (a commit put a file at a record's path; the checkout's reset
 * wrote it over this controller's record): such a file is the commit's, never read as a record nor
 * written over. The controller's own record is kept in memory and, with `displaced`, in the
 * checkout's git directory (read back at start: displaced-records.ts), published from memory (text),
 * and written back to the store when a later commit takes the file away (untracked, from checkTracked).
 */
export async function ownRecords(
  statusDir: string,
  statuses: Map<string, ObjectStatus>,
  displaced: DisplacedRecords | undefined,
  manifestRoot?: string,
) {
  const answer = await trackedRecords(statusDir).catch(() => undefined);
  const tracked = new Set(answer?.keys());
  // git's answer kept by this book, for its store; each record stamped with the directory it is
  // of (manifest_root), as apply's are: a prune sharing the store tells the two trees apart.
  const store = ownRecordsIn(statusDir, manifestRoot);
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

/** The record kept whose file is named `file` (`deployment.NAME.json`). */
export function recordNamed(
  statuses: ReadonlyMap<string, ObjectStatus>,
  file: string,
): ObjectStatus | undefined {
  for (const status of statuses.values())
    if (statusFileName(status.kind, status.name) === file) return status;
  return undefined;
}

/**
 * Says each record git tracks in `statusDir` that was not said yet (StatusBook.checkTracked), keeps
 * `names.tracked` the names git tracks now, and hands each name git tracks newly to `names.tracks`
 * and each it no longer tracks to `names.untracked`.
 */
export function trackedChecker(
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
