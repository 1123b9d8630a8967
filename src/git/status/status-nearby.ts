import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isOutside } from "../../path-inside.js";
import { loadStatusStore, defaultStatusDir } from "../../status/status-store.js";
import { latestAppliedNearby } from "../../status/applied-nearby.js";
import type { ChecksRecord } from "../../status/checks/checks-record.js";
import { laterChecks } from "../../status/checks/checks-record-problems.js";
import { directoriesBelow } from "../../status/stores-below.js";
import { emptyStatusStore, type ObjectStatus, type StatusStore } from "../../status/status-types.js";
import { loadStatusAndBranchNearby, manifestDirOf, type StatusLocation } from "./status-source.js";
import { loadStatusFromBranch } from "../records/load-status-branch.js";
import { trackedRecords } from "../records/tracked-records.js";

// The stores above and below a PATH (docs/status.md "Stores above and below"), read only: the
// default store of each directory above the manifest directory, up to the root of its git
// repository, and of each directory of its tree (a directory PATH only: a single file's objects
// live in its own directory's store), in the environment's ENV/ when there is one, in the
// directory and on the status branch when one is given. What they say was last applied
// (applied-nearby.ts) tells plan and apply that a secret is unchanged after an apply elsewhere.

/**
 * A directory PATH (its stores below count), also through a symbolic link: told by its real path
 * (manifestDirOf) being the path given, a tree reached through a link (`/srv/agents -> /repo/tree`)
 * was taken for a file, and its apply neither locked nor read the stores below it.
 */
const isDirectoryPath = (path: string): boolean => {
  try {
    return statSync(resolve(path)).isDirectory();
  } catch {
    return false;
  }
};

/** The directories strictly above `dir`, nearest first, up to and including `top` (none when `dir` is not below it). */
export function directoriesAbove(dir: string, top: string): string[] {
  const own = resolve(dir);
  const root = resolve(top);
  const found: string[] = [];
  if (own === root || isOutside(root, own)) return found;
  for (let at = dirname(own); ; at = dirname(at)) {
    found.push(at);
    if (at === root || dirname(at) === at) return found;
  }
}

/**
 * The store of `location` (loadStatus) and what the stores above it, up to the git root `top`
 * (undefined: none), and with `below` those of a directory PATH's tree, last applied per object.
 * A store that cannot be read is skipped (it only ever saves a re-send), and so are its
 * unreadable records.
 */
export async function loadStatusWithNearby(
  location: StatusLocation,
  top: string | undefined,
  options: { below?: boolean } = {},
): Promise<{ store: StatusStore; appliedNearby: Map<string, ObjectStatus> }> {
  const own = manifestDirOf(location.root);
  const dirs = top === undefined ? [] : directoriesAbove(own, top);
  const below = options.below === true && isDirectoryPath(location.root);
  const { store, branchNearby } = await loadStatusAndBranchNearby(location, { above: dirs, below });
  const stores: StatusStore[] = [...branchNearby];
  for (const dir of [...dirs, ...(below ? await directoriesBelow(own) : [])]) {
    const statusDir = join(defaultStatusDir(dir), location.environment ?? "");
    // A record git tracks is not plumb's (tracked-records.ts): ignored here as in PATH's own store.
    // A store nearby whose records git cannot say it tracks is skipped (it only saves a re-send).
    const tracked = await trackedRecords(statusDir).catch(() => undefined);
    if (tracked === undefined) continue;
    stores.push(await loadStatusStore(statusDir, tracked).catch(() => emptyStatusStore()));
  }
  return { store, appliedNearby: latestAppliedNearby(stores) };
}

/** A write-ahead intent a store nearby holds: where, and when its send began. */
type IntentNearby = { store: string; startedAt: string };

/** What the stores nearby say of whether an object is settled: their intents, their latest checks. */
export type VerdictsNearby = {
  intents: Map<string, IntentNearby>;
  /** Per object, the checks that finished last (`at`) among the stores nearby. */
  checks: Map<string, ChecksRecord>;
};

/**
 * What the stores above and below PATH (the stores loadStatusWithNearby reads, and the status
 * branch's) say of whether each object is settled: the write-ahead intents they hold (an apply of
 * the tree or of a directory of it is sending that object now, or was cut short) and the checks
 * that finished last there. loadStatusWithNearby takes neither (intents are settled by their own
 * store; checks come with the later apply, not the later verdict); a command that judges whether
 * something is settled and verified (promote) must see both. An intent missed fails open, so a
 * store whose tracked records git cannot name is read whole here (a committed record can then
 * only make an object look in flight, or its checks not passed). `ownDefault`: PATH's own default
 * store too (a command given --status-dir).
 */
export async function loadVerdictsNearby(
  location: StatusLocation,
  top: string | undefined,
  options: { below?: boolean; ownDefault?: boolean } = {},
): Promise<VerdictsNearby> {
  const own = manifestDirOf(location.root);
  const dirs = top === undefined ? [] : directoriesAbove(own, top);
  const below = options.below === true && isDirectoryPath(location.root);
  const found: VerdictsNearby = { intents: new Map(), checks: new Map() };
  const note = (store: string, records: StatusStore) => {
    for (const [key, record] of records.objects) {
      if (record.pending && !found.intents.has(key))
        found.intents.set(key, { store, startedAt: record.pending.started_at });
      const checks = laterChecks(found.checks.get(key), record.checks);
      if (checks) found.checks.set(key, checks);
    }
  };
  // With --status-dir, PATH's own default store is nearby too: where an apply of PATH without it
  // records its intents (apply --status-dir locks it for that reason).
  const owns = options.ownDefault === true ? [own] : [];
  for (const dir of [...owns, ...dirs, ...(below ? await directoriesBelow(own) : [])]) {
    const statusDir = join(defaultStatusDir(dir), location.environment ?? "");
    const tracked = await trackedRecords(statusDir).catch(() => new Map<string, string>());
    note(statusDir, await loadStatusStore(statusDir, tracked).catch(() => emptyStatusStore()));
  }
  if (location.statusBranch && (dirs.length > 0 || below)) {
    const remote = await loadStatusFromBranch({
      root: own,
      branch: location.statusBranch,
      gitEnv: location.gitEnv,
      gitStop: location.gitStop,
      environment: location.environment,
      queue: location.gitQueue,
      ...(dirs.length > 0 ? { above: dirs } : {}),
      ...(below ? { below: true } : {}),
    });
    for (const store of [...(remote.above ?? []), ...(remote.below ?? [])])
      note(`status branch ${location.statusBranch}`, store);
  }
  return found;
}

/**
 * The status directories of the stores above a manifest PATH (up to the git root `top`) and below a
 * directory PATH that are in use now (the store or its lock exists), in ENV/ with an environment:
 * a writer locks them too (lock/locks-in-order.ts), as they hold objects it applies.
 */
export async function nearbyStoresInUse(
  path: string,
  environment: string | undefined,
  top: string | undefined,
): Promise<string[]> {
  const own = manifestDirOf(path);
  const above = top === undefined ? [] : directoriesAbove(own, top);
  const below = isDirectoryPath(path) ? await directoriesBelow(own) : [];
  return [...above, ...below]
    .map((dir) => join(defaultStatusDir(dir), environment ?? ""))
    .filter((dir) => existsSync(dir) || existsSync(`${dir.replace(/[/\\]+$/, "")}.lock`))
    .sort();
}
