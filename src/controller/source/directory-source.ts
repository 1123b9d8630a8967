import { type FSWatcher, watch } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";

// Watches a manifest tree with one fs.watch per directory (inotify on Linux). It only says
// "something changed"; the controller rescans and compares per-document digests, so an edit
// reconciles exactly the objects whose documents changed.
//
// Not chokidar: it keeps an fs.watch on every file as well as every directory. At 10,000 manifests
// that was 10,100 inotify watches (past the 8,192 of fs.inotify.max_user_watches that many Linux
// hosts still default to, where it fails with ENOSPC) and ~23 MB of the controller's heap in
// watcher objects and closures. A directory's watch already reports every write, rename and delete
// of the files in it, which is all a "rescan now" signal needs.

/** Not watched, as the loader does not read them (manifest/load.ts). */
const IGNORED_DIRS = new Set([".git", ".plumb", "node_modules"]);

export type DirectoryWatcher = { ready: Promise<void>; close(): Promise<void>; watched(): number };

export function watchDirectory(
  dir: string,
  onChange: (path: string) => void,
  onError: (error: Error) => void,
): DirectoryWatcher {
  const root = resolve(dir);
  let realRoot = root;
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let pending = Promise.resolve();

  const inside = (real: string) => real === realRoot || real.startsWith(realRoot + sep);
  const reportError = (error: unknown) => {
    const err = error as NodeJS.ErrnoException;
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return; // removed while we looked: its parent says so
    onError(
      err.code === "ENOSPC"
        ? new Error(
            `cannot watch more directories (${err.message}): raise fs.inotify.max_user_watches, or use a git source`,
          )
        : err,
    );
  };

  const unwatchTree = (path: string) => {
    for (const [watched, watcher] of watchers)
      if (watched === path || watched.startsWith(path + sep)) {
        watcher.close();
        watchers.delete(watched);
      }
  };

  /**
   * Watches `path` and every directory under it the loader would read (symlinks inside the root too).
   * `known`: its real path, when it is a plain directory of a known one (a realpath call per
   * directory lstats every component of its path: 2,000 nested directories took minutes).
   */
  const watchTree = async (path: string, seen: Set<string>, known?: string): Promise<void> => {
    if (closed || watchers.has(path)) return;
    const real = known ?? (await realpath(path));
    if (!inside(real) || seen.has(real) || (!known && intoIgnored(realRoot, real))) return;
    seen.add(real);
    const watcher = watch(path, { persistent: true }, (event, name) => {
      if (name && IGNORED_DIRS.has(String(name))) return;
      const changed = name ? join(path, String(name)) : path;
      onChange(changed);
      // Only a rename can create or remove a directory: look at that one entry, not the whole tree.
      if (event === "rename" && name) enqueue(() => recheck(changed));
    });
    watcher.on("error", () => {
      watcher.close();
      watchers.delete(path);
    });
    watchers.set(path, watcher);
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (IGNORED_DIRS.has(entry.name)) continue;
      const child = join(path, entry.name);
      if (entry.isDirectory()) await watchTree(child, seen, join(real, entry.name)).catch(reportError);
      else if (entry.isSymbolicLink() && (await isDirectory(child)))
        await watchTree(child, seen).catch(reportError);
    }
  };

  /** An entry was renamed in or out: watch a new directory (and rescan once its watch is up), drop a gone one. */
  const recheck = async (path: string) => {
    if (await isDirectory(path)) {
      if (watchers.has(path)) return;
      await watchTree(path, new Set()).catch(reportError);
      // Files written into the new directory before its watch existed are seen by this rescan.
      onChange(path);
    } else unwatchTree(path);
  };

  const enqueue = (task: () => Promise<void>) => {
    pending = pending.then(() => (closed ? undefined : task())).catch(reportError);
  };

  const ready = (async () => {
    realRoot = await realpath(root);
    await watchTree(root, new Set());
  })().catch((error) => reportError(error));
  pending = ready;

  return {
    ready,
    watched: () => watchers.size,
    async close() {
      closed = true;
      await pending;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** A link into .git, .plumb or node_modules: the loader does not read there either. */
const intoIgnored = (realRoot: string, real: string) =>
  real
    .slice(realRoot.length + 1)
    .split(sep)
    .some((segment) => IGNORED_DIRS.has(segment));

const isDirectory = (path: string) =>
  stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
