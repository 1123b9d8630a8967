import { constants } from "node:fs";
import { access, lstat, readdir, realpath } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { manifestDirOf } from "../../git/status/status-source.js";
import { isOutside } from "../../path-inside.js";
import { escapeControls, PlumbError } from "../../errors.js";
import { DEFAULT_STATUS_DIR, defaultStatusDir } from "../../status/status-store.js";

// A --dir controller writes its state only inside the tree it was given: its store is
// `--dir/.plumb/status` unless --status-dir names one. A `.plumb`, `.plumb/status`, the lock
// beside it or an environment's store in it that is a symlink out of the tree (or to nothing yet)
// would have it write status records and locks wherever the link leads: refused at start, as a git
// controller refuses a committed one (git-source.ts, path-outside-checkout). A link that stays
// inside is followed; a store elsewhere on purpose is `--status-dir` (docs/controller.md "Symlinks
// in --dir"). The commands that write a store (apply, adopt; drift and status refreshing records)
// check the manifests' directory the same way before they take its lock (docs/status.md). Only directories matter: a record or lock file is replaced by rename, never written
// through a link, and read without following one (status/state-file.ts).

/** Who checks: the controller names its --dir, a command the manifests' directory. */
type Checker = "controller" | "command";

/** Throws store-outside-dir when the default store under `dir` really lies outside it (nothing when `statusDir` is given). */
export async function checkStoreInsideDir(
  dir: string,
  statusDir: string | undefined,
  by: Checker = "controller",
): Promise<void> {
  if (statusDir) return;
  const realDir = await realpath(dir);
  const store = join(dir, DEFAULT_STATUS_DIR);
  const chain = [join(dir, ".plumb"), store, `${store}.lock`];
  for (const at of chain) {
    if (!(await lstat(at).catch(() => undefined))) {
      if (at === join(dir, ".plumb")) return; // nothing under it either
      continue;
    }
    await checkInside(dir, realDir, at, by);
  }
  // An environment's store (`.plumb/status/ENV`) and its lock (`ENV.lock`): the links among them.
  for (const entry of await readdir(store, { withFileTypes: true }).catch(() => []))
    if (entry.isSymbolicLink()) await checkInside(dir, realDir, join(store, entry.name), by);
}

async function checkInside(dir: string, realDir: string, at: string, by: Checker): Promise<void> {
  const [named, writer] =
    by === "controller"
      ? [`--dir ${escapeControls(dir)}`, "the controller writes its status only inside --dir"]
      : [escapeControls(dir), "plumb writes its status only inside the manifests' directory"];
  const refuse = (why: string, where = ", outside the directory") =>
    new PlumbError(
      "store-outside-dir",
      `${named}: ${escapeControls(relative(dir, at))} ${why}${where}; ${writer}: replace the symlink with a directory, or pass --status-dir to keep the status there on purpose`,
    );
  const real = await realpath(at).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ELOOP") throw refuse("is a symlink loop (ELOOP) that never reaches a directory", "");
    throw refuse("is a symlink to nothing (that could be made later)");
  });
  if (isOutside(realDir, real)) throw refuse(`leads to ${escapeControls(real)} through a symlink`);
}

/**
 * With --status-dir X, the store PATH would have without it (its ENV/ with an environment), to lock
 * as well: X is where no other writer looks, so `apply TREE/sub --status-dir X` and `apply TREE`
 * both sent what is under sub. Locked, PATH's default store is in use and the others find it. Left
 * out when it cannot hold a lock of ours: a symlink out of PATH's directory (never written through),
 * or, not in use, a place this user cannot write (a read-only checkout, the reason for --status-dir),
 * where no writer of this user can be using it either.
 */
export async function defaultStoreToMark(path: string, environment: string | undefined): Promise<string[]> {
  const dir = manifestDirOf(path);
  const store = join(defaultStatusDir(dir), environment ?? "");
  try {
    await checkStoreInsideDir(dir, undefined, "command");
  } catch {
    return [];
  }
  const inUse = async (at: string) => Boolean(await lstat(at).catch(() => undefined));
  if ((await inUse(store)) || (await inUse(`${store}.lock`))) return [store];
  return (await writable(dirname(store))) ? [store] : [];
}

/** Whether the nearest existing directory at or above `dir` lets this user create entries. */
async function writable(dir: string): Promise<boolean> {
  for (let at = dir; ; at = dirname(at)) {
    if (await lstat(at).catch(() => undefined))
      return access(at, constants.W_OK).then(
        () => true,
        () => false,
      );
    if (dirname(at) === at) return false;
  }
}
