import { realpathSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { PushFence } from "../fenced-push.js";
import type { CheckoutQueue } from "../checkout-queue.js";
import type { GitStop } from "../stoppable-git.js";
import { loadStatusFromBranch } from "../records/load-status-branch.js";
import {
  type OwnRecords,
  publishStatusBranch,
  type PublishResult,
} from "../records/publish-status-branch.js";
import { defaultStatusDir, loadStatusStore } from "../../status/status-store.js";
import {
  type OwnFile,
  removeObjectStatus,
  removeObservedStatus,
  saveObjectStatus,
  saveObservedStatus,
} from "../../status/write/save-records.js";
import { trackedRecords, trackedRecordsKept } from "../records/tracked-records.js";
import { mergePruneLedger } from "../../status/prune-ledger.js";
import { type ObjectStatus, type StatusStore, mergeStatusStores } from "../../status/status-types.js";

/** Where a command reads and writes status: `--status-dir` and `--status-branch`, shared by all commands. */
export type StatusLocation = {
  /** Manifest root PATH. */
  root: string;
  /** `--status-dir`; default `<root>/.plumb/status`. */
  statusDir?: string | undefined;
  /** `--status-branch`; when set the branch is read too and written after apply/drift. */
  statusBranch?: string | undefined;
  /** Environment of the status branch's git commands (credentials); default: this process's. */
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the status branch's git commands over the network end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** The checkout's git queue, where the status branch's git work in the checkout takes turns (the controller's). */
  gitQueue?: CheckoutQueue | undefined;
  /**
   * With environments (docs/environments.md): the environment whose store this is. Its records live
   * in `ENV/` under the status directory (statusDir names it) and under `.plumb/status/ENV/` on the
   * status branch, with a lease of its own.
   */
  environment?: string | undefined;
};

/**
 * The directory of the manifests: PATH itself, or the directory of a single manifest file, with the
 * links to that directory resolved (as `cd` and git have it; a linked file's store stays beside the
 * link, in the directory named). Through a link from outside the repository (`/srv/agents ->
 * /repo/agents`) the stores above it and their locks were looked for from the link's own parents:
 * none found, so an apply through the link ran beside one of the tree's, both sending one change.
 */
export function manifestDirOf(root: string): string {
  const path = resolve(root);
  try {
    const dir = statSync(path).isFile() ? dirname(path) : path;
    return realpathSync(dir);
  } catch {
    return path; // missing: reported where the manifests are loaded
  }
}

/** `--status-dir`, else `.plumb/status` in the manifest directory (beside a single manifest file). */
export const resolveStatusDir = (location: StatusLocation): string =>
  location.statusDir ? resolve(location.statusDir) : defaultStatusDir(manifestDirOf(location.root));

/**
 * The records of a status directory, those git tracks ignored and reported as problems (a record
 * committed to the repository is not plumb's, tracked-records.ts): how every reader of a store reads
 * it, the status page's too. status-tracking-unknown when git cannot say.
 */
export const loadUntrackedStatusStore = async (dir: string): Promise<StatusStore> =>
  loadStatusStore(dir, await trackedRecords(dir));

/**
 * The records of the store `dir` as plumb's writers change them: each write and removal asks
 * whether the file at the record's path is the store's own first (OwnFile), and a file git tracks
 * there (a commit put it at the record's path), or one git cannot say of, is not (as
 * loadUntrackedStatusStore reads the store). git's answer is kept by this handle until git's index
 * changes (trackedRecordsKept): open one for a run (a command's) or a status book (a controller's)
 * and write through it, not one per write.
 */
export type RecordWriter = {
  /**
   * Writes a record as saveObjectStatus does, keeping a later apply's fields and number from the
   * file at its path only when that file is the store's own.
   */
  saveOwnObjectStatus: (status: ObjectStatus) => Promise<string>;
  /**
   * An observation (`status`, `drift`) written as saveObservedStatus does, where a file git tracks
   * at the record's path (a commit's, whatever sequence number it says) never holds a newer record.
   */
  saveOwnObservedStatus: (status: ObjectStatus, base: number | null) => Promise<boolean>;
  /**
   * A removal (`status`, `drift`: the object is gone) as removeObservedStatus does, where a file git
   * tracks at the record's path (a commit's) is neither compared nor deleted from the working tree.
   */
  removeOwnObservedStatus: (status: ObjectStatus) => Promise<boolean>;
  /** An object's record removed (pruned) as removeObjectStatus does, never a file git tracks at its path. */
  removeOwnObjectStatus: (kind: string, name: string) => Promise<void>;
  /** The names git tracks in the store now, as this handle last heard it; throws when git cannot say. */
  trackedRecordsNow: () => Promise<ReadonlyMap<string, string>>;
};

/**
 * The store `dir`'s records, written as its own records only (RecordWriter). `manifestRoot`: the
 * manifest_root (status/manifest-root.ts) stamped on each record written with a manifest_file that
 * names none, so a prune of another directory sharing the store never takes it for its own.
 */
export function ownRecordsIn(dir: string, manifestRoot?: string): RecordWriter {
  const trackedRecordsNow = trackedRecordsKept(dir);
  /** Whether a file in the store is its own record: not one git tracks, nor one git cannot say of. */
  const own: OwnFile = async (name) => {
    const tracked = await trackedRecordsNow().catch(() => undefined);
    return tracked !== undefined && !tracked.has(name);
  };
  return {
    saveOwnObjectStatus: (status) =>
      saveObjectStatus(
        dir,
        manifestRoot !== undefined && status.manifest_file && !status.manifest_root
          ? { ...status, manifest_root: manifestRoot }
          : status,
        own,
      ),
    saveOwnObservedStatus: (status, base) => saveObservedStatus(dir, status, base, own),
    removeOwnObservedStatus: (status) => removeObservedStatus(dir, status, own),
    removeOwnObjectStatus: (kind, name) => removeObjectStatus(dir, kind, name, own),
    trackedRecordsNow,
  };
}

/**
 * The store as `plan`, `apply`, `drift` and `status` see it: the local directory merged with the
 * status branch when one is given (the newer record of each object wins), so a fresh clone with an
 * empty directory still knows the fingerprints of the secrets last applied.
 */
export async function loadStatus(location: StatusLocation): Promise<StatusStore> {
  return (await loadStatusAndBranchNearby(location, { above: [], below: false })).store;
}

/**
 * loadStatus, and from the status branch (on the same fetch) the stores of the directories `above`
 * and, with `below`, those under the manifest directory (status-nearby.ts reads them locally):
 * those above nearest first, then those below; empty without a status branch.
 */
export async function loadStatusAndBranchNearby(
  location: StatusLocation,
  nearby: { above: readonly string[]; below: boolean },
): Promise<{ store: StatusStore; branchNearby: StatusStore[] }> {
  const dir = resolveStatusDir(location);
  const local = await loadUntrackedStatusStore(dir);
  if (!location.statusBranch) return { store: local, branchNearby: [] };
  const remote = await loadStatusFromBranch({
    ...branchTargetOf(location, location.statusBranch),
    ...(nearby.above.length > 0 ? { above: nearby.above } : {}),
    ...(nearby.below ? { below: true } : {}),
  });
  // The branch's prune ledger joins the directory's: --prune-max counts earlier runs' deletions. A
  // place that cannot be written is left as it is: plan and status only read, and apply refuses an
  // unwritable status directory before it sends anything.
  if (remote.pruneLedger !== undefined)
    await mergePruneLedger(resolveStatusDir(location), remote.pruneLedger).catch(() => undefined);
  const branchNearby = [...(remote.above ?? []), ...(remote.below ?? [])];
  return { store: mergeStatusStores(remote, local), branchNearby };
}

/** The status branch `branch` of `location`, as the branch's load and publish take it. */
const branchTargetOf = (location: StatusLocation, branch: string) => ({
  root: manifestDirOf(location.root),
  branch,
  gitEnv: location.gitEnv,
  gitStop: location.gitStop,
  environment: location.environment,
  queue: location.gitQueue,
});

/**
 * Commits and pushes the directory to the status branch, when one is configured, fenced by the
 * state lock (status/fenced-push.ts): nothing is pushed once its lease is gone.
 */
export async function publishStatus(
  location: StatusLocation,
  message: string,
  fence?: PushFence,
  own?: OwnRecords,
): Promise<PublishResult | null> {
  if (!location.statusBranch) return null;
  return publishStatusBranch(
    branchTargetOf(location, location.statusBranch),
    resolveStatusDir(location),
    message,
    fence,
    own,
  );
}

/**
 * Where controllers before one status location kept the records of a `--path` below the repository
 * root: `.plumb/status` at the root, locally and on the status branch. Read once, when the new place
 * holds nothing, and moved object by object (the controller's status book); undefined when the two
 * places are the same or --status-dir names the directory.
 */
export function legacyStatusLocation(location: StatusLocation, repoRoot: string): StatusLocation | undefined {
  if (location.statusDir || resolve(location.root) === resolve(repoRoot)) return undefined;
  return { ...location, root: repoRoot };
}
