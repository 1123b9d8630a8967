import { resolve, sep } from "node:path";
import { watch } from "chokidar";

// Watches a manifest directory. It only says "something changed"; the controller rescans and compares
// per-document digests, so an edit reconciles exactly the objects whose documents changed.

const IGNORED_DIRS = [".git", ".plumb", "node_modules"];

export type DirectoryWatcher = { ready: Promise<void>; close(): Promise<void> };

export function watchDirectory(
  dir: string,
  onChange: (path: string) => void,
  onError: (error: Error) => void,
): DirectoryWatcher {
  const root = resolve(dir);
  const ignored = (path: string) => {
    const rel = path.startsWith(root) ? path.slice(root.length) : path;
    return rel.split(sep).some((part) => IGNORED_DIRS.includes(part));
  };
  const watcher = watch(root, { ignoreInitial: true, ignored, atomic: true, persistent: true });
  for (const event of ["add", "change", "unlink", "addDir", "unlinkDir"] as const)
    watcher.on(event, (path: string) => onChange(path));
  watcher.on("error", (error) => onError(error as Error));
  const ready = new Promise<void>((resolveReady) => watcher.once("ready", () => resolveReady()));
  return { ready, close: () => watcher.close() };
}
