import { existsSync, lstatSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { checkStoreInsideDir, defaultStoreToMark } from "../controller/source/store-inside-dir.js";
import { nearbyStoresInUse as storesInUse } from "../git/status/status-nearby.js";
import { manifestDirOf } from "../git/status/status-source.js";
import { type LockOptions, lockTargetOf, type StateLock } from "../lock/index.js";
import { acquireStateLocks } from "../lock/locks-in-order.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import { checkManifestPath } from "../manifest/list-tree.js";
import { defaultStatusDir } from "../status/status-store.js";
import type { ConnectionFlags } from "./options.js";

/** The lease and clocks of the lock (tests inject a short lease and a monotonic clock they move). */
export type StateLockTiming = Pick<LockOptions, "leaseMs" | "monotonic" | "clock" | "retryMs" | "say">;

/**
 * Runs `work` holding the state lock of PATH's status store (--status-dir, --status-branch), and of
 * the stores nearby in use (nearbyStoresInUse below), taken before the store is read and released at the
 * end; `lock.lost` aborts if another writer takes one of them, and `lock.assertHeld` is the fence
 * every write (request, record, push) passes first.
 */
export async function withStateLock<T>(
  path: string,
  flags: Pick<ConnectionFlags, "statusDir" | "statusBranch" | "environment"> & {
    lockTimeout?: number | undefined;
    /** With environments: statusDir is the environment's default store, nearby ones still count. */
    statusDirOfEnvironment?: boolean | undefined;
  },
  command: string,
  work: (lock: Pick<StateLock, "lost" | "assertHeld" | "pushFence">) => Promise<T>,
  timing: StateLockTiming = {},
): Promise<T> {
  // A missing PATH (or a loop, a FIFO) is said first: taking the lock would create PATH/.plumb/ for nothing.
  await checkManifestPath(path);
  // The default store (an environment's too) is written only inside PATH's directory, not through a
  // symlink out of it; --status-dir names one elsewhere on purpose.
  await checkStoreInsideDir(
    manifestDirOf(path),
    flags.statusDirOfEnvironment === true ? undefined : flags.statusDir,
    "command",
  );
  const target = lockTargetOf({
    root: path,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    environment: flags.environment,
  });
  // A lock not trusted (committed to git) is said on the command's stderr, given by the caller.
  const say = timing.say ?? ((line: string) => process.stderr.write(`plumb: ${line}\n`));
  const options = { ...timing, command, timeoutMs: flags.lockTimeout ?? 0, say };
  // The stores nearby hold objects PATH applies too (nearbyStoresInUse), all taken in one order and
  // scanned again once held (lock/locks-in-order.ts). An explicit --status-dir reads that store
  // only, but sends the same deployments: it locks them too, and PATH's default store as a mark.
  const explicit = Boolean(flags.statusDir) && flags.statusDirOfEnvironment !== true;
  const scan = async () => [
    ...(await nearbyStoresInUse(path, flags.environment)),
    ...(explicit ? await defaultStoreToMark(path, flags.environment) : []),
  ];
  const lock = await acquireStateLocks(target, scan, options);
  try {
    return await work(lock);
  } finally {
    await lock.release();
  }
}

// The stores nearby PATH (docs/status.md "Stores above and below") hold objects PATH applies too:
// `apply TREE` and `apply TREE/sub` each lock their own store, so when they ran at once both sent
// every change under sub (two revisions for one change). A writer therefore also locks the stores
// nearby that are in use (the store or its lock exists), all in one order (lock/locks-in-order.ts);
// the controller does the same (controller/leadership.ts).

/** The status directories of the stores above PATH (up to the git root) and below a directory PATH, in use now. */
async function nearbyStoresInUse(path: string, environment: string | undefined): Promise<string[]> {
  const stores = await storesInUse(path, environment, gitRootOf(manifestDirOf(path)));
  return [...new Set([...stores, ...(await linkedFileStores(path, environment))])].sort();
}

/**
 * A PATH that is a link to a file keeps its store beside the link (manifestDirOf), yet applies what
 * the file's own directory applies: that directory's store and those above it, in use, are locked
 * too. Unlocked, `apply LINK` ran beside an `apply DIR` holding DIR's store, both sending the change.
 */
async function linkedFileStores(path: string, environment: string | undefined): Promise<string[]> {
  let real: string;
  try {
    if (!lstatSync(path).isSymbolicLink()) return [];
    real = realpathSync(path);
    if (!statSync(real).isFile()) return []; // a linked directory: manifestDirOf resolves it
  } catch {
    return []; // missing or a loop: said where the manifests are loaded
  }
  const dir = dirname(real);
  if (dir === manifestDirOf(path)) return [];
  const own = join(defaultStatusDir(dir), environment ?? "");
  const inUse = existsSync(own) || existsSync(`${own}.lock`) ? [own] : [];
  return [...inUse, ...(await storesInUse(real, environment, gitRootOf(dir)))];
}
