import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { escapeControls, type PlumbErrorCode } from "../../errors.js";
import { isOutside } from "../../path-inside.js";
import { insideGit, type loadSourceFilter } from "./source-filter.js";
import type { FoundFile } from "./read-listed-files.js";

// The walk of a source directory (source-tree.ts): every file that may be uploaded, within the
// bounds; a symlink must stay inside the directory and out of any `.git`, a secret's file is left out.

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

// By inode too: a hard link to a secret file has a path of its own.
const inode = (info: { dev: number; ino: number }) => `${info.dev}:${info.ino}`;

export async function inodesOf(files: Iterable<string>): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const file of files) {
    const info = await stat(file).catch(() => null);
    if (info) inodes.add(inode(info));
  }
  return inodes;
}

/** What a walk of the source directory needs to know. */
export type Walk = {
  /** Real paths of the source directory and of the manifest root; the path as errors show it. */
  real: string;
  realRoot: string;
  shown: string;
  filter: Awaited<ReturnType<typeof loadSourceFilter>>;
  secretFiles: Set<string>;
  secretInodes: Set<string>;
  maxBytes: number;
  maxFiles: number;
};
export type Failures = {
  fail: (why: string) => never;
  failWith: (code: PlumbErrorCode, why: string) => never;
};

/** Every file under the directory that may be uploaded, in walk order, within the bounds. */
export async function walkSource(
  walk: Walk,
  { fail, failWith }: Failures,
): Promise<{ found: FoundFile[]; size: number }> {
  const { real, realRoot, shown, filter } = walk;
  const found: FoundFile[] = [];
  let size = 0;
  // Real paths of directories entered, so a symlinked directory is read once and loops end.
  const visited = new Set<string>();

  const addFile = async (relativePath: string, realFile: string) => {
    if (walk.secretFiles.has(realFile)) return; // a secret's value is never source
    const info = await stat(realFile);
    if (walk.secretInodes.has(inode(info))) return;
    size += info.size;
    if (found.length + 1 > walk.maxFiles)
      fail(`${shown} holds more than ${walk.maxFiles} files; keep build outputs and dependencies out of it`);
    if (size > walk.maxBytes)
      fail(`${shown} is over ${mib(walk.maxBytes)}; keep build outputs and dependencies out of it`);
    // git's view of a mode: executable by anyone, or not.
    found.push({
      path: relativePath,
      real: realFile,
      mode: info.mode & 0o111 ? 0o755 : 0o644,
      size: info.size,
    });
  };

  const visit = async (realDir: string, prefix: string): Promise<void> => {
    if (visited.has(realDir)) return;
    visited.add(realDir);
    await filter.enter(prefix, realDir);
    for (const entry of await readdir(realDir, { withFileTypes: true })) {
      const relativePath = `${prefix}${entry.name}`;
      const path = join(realDir, entry.name);
      let target = path;
      if (entry.isSymbolicLink()) {
        target = await realpath(path).catch((error: NodeJS.ErrnoException) =>
          fail(
            error.code === "ELOOP"
              ? `${shown}/${relativePath} is a symlink loop (ELOOP) that never reaches a file; remove it`
              : `${shown}/${relativePath} is a broken symlink`,
          ),
        );
        const unsafe = (why: string) =>
          failWith(
            "source-unsafe-entry",
            `${shown}/${relativePath} is a symlink ${why}; remove it, or copy what it needs into ${shown}`,
          );
        if (isOutside(realRoot, target)) unsafe("that leads outside the manifest root");
        if (isOutside(real, target)) unsafe(`that leaves ${shown}`);
        if (insideGit(relative(real, target).split(sep).join("/"))) unsafe("into a .git directory");
      }
      const info = await (entry.isSymbolicLink() ? stat(target) : lstat(path)).catch((error: unknown) => {
        // readdir gives a name that is not UTF-8 with U+FFFD for its bytes: a name no file has.
        if (!entry.name.includes("\uFFFD")) throw error;
        return fail(
          `${shown}/${escapeControls(relativePath)} is named with bytes that are not UTF-8; rename it`,
        );
      });
      if (!info.isDirectory() && !info.isFile()) continue; // sockets, FIFOs and devices are not source
      const targetPath = relative(real, target).split(sep).join("/");
      // A link is left out when its own path or what it points to is (config.txt -> .env).
      const isDirectory = info.isDirectory();
      if (
        filter.excluded(relativePath, isDirectory) ||
        (targetPath !== "" && filter.excluded(targetPath, isDirectory))
      )
        continue;
      if (info.isDirectory()) await visit(target, `${relativePath}/`);
      else await addFile(relativePath, target);
    }
  };
  await visit(real, "");
  return { found, size };
}
