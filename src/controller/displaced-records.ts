import { readdir, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { isOutside } from "../path-inside.js";
import type { Logger } from "../logger.js";
import { simpleGit } from "../git/simple-git.js";
import { readStateFile } from "../status/state-file.js";
import { MAX_RECORD_BYTES, parseObjectStatus } from "../status/status-store.js";
import { anyFile, saveObjectStatus } from "../status/write/save-records.js";
import { mergeStatusStores, type ObjectStatus, statusFileName, statusKey } from "../status/status-types.js";
import { errorMessage } from "./error-message.js";

// A pulled commit can put a file at the path of one of the controller's own status records (its
// store is in its checkout): the reset to that commit writes the committed file over the record.
// The committed file is never read as a record (tracked-records.ts), so while git tracks it the
// controller's record of that object is kept here instead: in the checkout's own git directory,
// which no commit can write and git never tracks or resets, under the store's path in the checkout
// (`$GIT_DIR/plumb/displaced-status/<store path>/<record file>`), so it belongs to that checkout
// and that store alone. Written atomically at every change (saveObjectStatus), read back at the
// next start while git still tracks the file there, and written back to the store (and removed
// here) once a commit takes the file away (docs/status.md). Both places are written trusting any
// file at the record's path (anyFile), on purpose: git tracks nothing in its own directory, and a
// write-back goes only where git has just said it tracks no file.

export type DisplacedRecords = {
  /**
   * At start: each displaced record joins `statuses` (merged with what was read there, as the
   * status branch's records are); one whose file name git no longer tracks in the store (a commit
   * took the file away while the controller was down) is written back to the store, then removed;
   * none is when git could not say what it tracks (`tracked` undefined). A record of `statuses`
   * (read from the status branch) whose file git tracks and that is not kept here yet is kept here.
   */
  restore: (tracked: ReadonlySet<string> | undefined, statuses: Map<string, ObjectStatus>) => Promise<void>;
  /** Keeps `status` here (its file in the store is the commit's). */
  save: (status: ObjectStatus) => Promise<void>;
  /** Writes `status` back to the store, then removes it here (the commit's file is gone). */
  writeBack: (status: ObjectStatus) => Promise<void>;
  /** Removes the record named `file` here (the object was pruned, or its record is back in the store). */
  remove: (file: string) => Promise<void>;
};

/**
 * The displaced records of the store `statusDir` in the git checkout `checkoutDir`; undefined
 * when the store is not in the checkout (`--status-dir` elsewhere: nothing a commit brings lands
 * there) or git cannot name the checkout's git directory.
 */
export async function displacedRecords(
  checkoutDir: string,
  statusDir: string,
  log: Logger,
): Promise<DisplacedRecords | undefined> {
  if (isOutside(checkoutDir, statusDir)) return undefined; // a store named `..x` is inside
  const inCheckout = relative(checkoutDir, statusDir);
  const gitDir = await simpleGit(checkoutDir)
    .revparse(["--absolute-git-dir"])
    .then((out) => out.trim())
    .catch(() => "");
  if (!gitDir) return undefined;
  const dir = join(gitDir, "plumb", "displaced-status", inCheckout);
  // One change at a time, in the order asked: a record kept as a commit takes its path and the
  // record's next write, both under way, never land the other way round.
  let turns: Promise<unknown> = Promise.resolve();
  const inTurn = (work: () => Promise<unknown>): Promise<void> => {
    const turn = turns.then(work);
    turns = turn.catch(() => undefined);
    return turn.then(() => undefined);
  };
  const remove = (file: string) => inTurn(() => rm(join(dir, file), { force: true }));
  return {
    async restore(tracked, statuses) {
      const displaced = await readDisplaced(dir, log);
      for (const [file, record] of displaced) {
        const key = statusKey(record.kind, record.name);
        const kept = statuses.get(key);
        const merged = kept ? mergedRecord(key, kept, record) : record;
        statuses.set(key, merged);
        if (!tracked || tracked.has(file)) continue;
        await saveObjectStatus(statusDir, merged, anyFile);
        await remove(file);
      }
      for (const status of statuses.values()) {
        const file = statusFileName(status.kind, status.name);
        if (tracked?.has(file) && !displaced.has(file)) await saveObjectStatus(dir, status, anyFile);
      }
    },
    save: (status) => inTurn(() => saveObjectStatus(dir, status, anyFile)),
    writeBack: (status) =>
      inTurn(async () => {
        await saveObjectStatus(statusDir, status, anyFile);
        await rm(join(dir, statusFileName(status.kind, status.name)), { force: true });
      }),
    remove,
  };
}

/** `kept` and `displaced` merged as a local record and the status branch's are (newer of each part). */
const mergedRecord = (key: string, kept: ObjectStatus, displaced: ObjectStatus): ObjectStatus =>
  mergeStatusStores(
    { objects: new Map([[key, kept]]), problems: [] },
    { objects: new Map([[key, displaced]]), problems: [] },
  ).objects.get(key) ?? displaced;

/**
 * The displaced records by file name: each a regular file read as a record is (not through a
 * link, bounded), and kept only when it is the record its name says; anything else is logged
 * and left alone.
 */
async function readDisplaced(dir: string, log: Logger): Promise<Map<string, ObjectStatus>> {
  const records = new Map<string, ObjectStatus>();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const file = join(dir, name);
    const parsed = await readStateFile(file, MAX_RECORD_BYTES, "a record").then(
      parseObjectStatus,
      (error: unknown) => `not readable: ${errorMessage(error)}`,
    );
    const reason =
      typeof parsed === "string"
        ? parsed
        : statusFileName(parsed.kind, parsed.name) === name
          ? undefined
          : "not the record its name says";
    if (reason === undefined && typeof parsed !== "string") records.set(name, parsed);
    else log.warn({ file, reason }, "ignoring displaced status record");
  }
  return records;
}
