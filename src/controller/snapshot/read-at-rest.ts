import { mkdtemp, open, rm, stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { LoadResult } from "../../manifest/load.js";
import type { Logger } from "../../logger.js";
import type { ManifestLoader } from "./manifest-loader.js";

// A directory's scan uses a read of the manifests only when every file it read had been at rest for
// the settle time (--settle) when the read began. The scan after a save waits for the save's events
// (file-debounce.ts), not for the writer: one that writes a file in pieces with a pause between
// them (a generator's output, a slow copy) had a prefix read, and a prefix can parse and validate
// (an image tag cut short): applied, then the whole file, a wrong spec live meanwhile and one
// revision more. So after each read every file it read, and every file the last used read held, is
// looked at: one changed less than the settle time before the read began (or during it) puts the
// read off until that file is old enough, then the tree is read again. A file that keeps changing
// puts it off MAX_WAIT_SETTLES settle times at most; then the read is used as it is, with a warning.
// File times are compared with the filesystem's own clock (a file of ours written at the read's
// start), not the process's: they agree under a skewed process clock (faketime) too. A git source
// needs none of this: its scan follows a finished `git reset`.

/** How long a file must be unchanged before a scan uses it: --settle's default. */
export const FILE_SETTLE_MS = 50;
/** Settle times one scan may be put off for before it uses its read as it is. */
const MAX_WAIT_SETTLES = 40;
/** Files stat'ed at once after a read. */
const STAT_BATCH = 64;

export type ReadAtRest = {
  /**
   * `read`, again until the files it read were at rest when it began; `deferred` hears of each
   * read put off, with the files too young.
   */
  load<T extends AtRestRead>(
    read: () => Promise<T>,
    deferred: (files: string[], waitMs: number) => void,
  ): Promise<T>;
  close(): Promise<void>;
};

/** A read of the manifests, with other files it read (absolute: internal_source directories'). */
type AtRestRead = LoadResult & { alsoRead?: readonly string[] };

/** The files a load read: those holding documents, those with problems, and the others it names. */
const filesOf = (result: AtRestRead): Set<string> =>
  new Set([
    ...[...result.manifests, ...(result.environments ?? []), ...result.problems]
      .map((entry) => entry.file)
      .filter(Boolean),
    ...(result.alsoRead ?? []),
  ]);

/** When a file last changed: its data (mtime, which a copy may set back) or its inode (ctime). */
const changedAt = (info: Stats): number => Math.max(info.mtimeMs, info.ctimeMs);

type FileClock = { now(): Promise<number>; close(): Promise<void> };

/**
 * Now on the filesystem's clock: the change time of a byte written into a file of ours. The file is
 * unlinked as soon as it is open (its handle still writes and stats it): a controller killed
 * (SIGKILL, an OOM kill) left its directory in the temporary directory, one per run, for ever.
 */
async function openFileClock(): Promise<FileClock> {
  try {
    const dir = await mkdtemp(join(tmpdir(), "plumb-file-clock-"));
    const handle = await open(join(dir, "now"), "w+");
    // Windows cannot remove an open file: there close() removes it.
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    const byte = Buffer.alloc(1);
    return {
      async now() {
        try {
          await handle.write(byte, 0, 1, 0);
          return changedAt(await handle.stat());
        } catch {
          return Date.now(); // closed while a scan ran (the controller stops)
        }
      },
      async close() {
        await handle.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch {
    return { now: async () => Date.now(), close: async () => undefined }; // no temporary directory
  }
}

/** A directory's ReadAtRest (--settle, default FILE_SETTLE_MS); none for a git source. */
export function directoryReadAtRest(
  source: { kind: "dir" | "git"; manifestRoot: string },
  options: { settleMs?: number | undefined; log: Logger; stopping: () => boolean },
): ReadAtRest | undefined {
  if (source.kind !== "dir") return undefined;
  return createReadAtRest({
    root: source.manifestRoot,
    settleMs: options.settleMs ?? FILE_SETTLE_MS,
    stopping: options.stopping,
    warn: (files, waitedMs) =>
      options.log.warn({ files, waited_ms: waitedMs }, "manifest files still changing: read as they are"),
  });
}

/**
 * The environments' reader of the tree (each trigger's read also says which environments git
 * defines): for a directory its reads are used only at rest, so a half-written Environment file is
 * not followed either. Closing it closes `loader`.
 */
export function treeAtRest(
  loader: Pick<ManifestLoader, "loadTree" | "close">,
  source: { kind: "dir" | "git"; manifestRoot: string },
  options: { settleMs?: number | undefined; log: Logger; stopping: () => boolean },
): Pick<ManifestLoader, "loadTree" | "close"> {
  const atRest = directoryReadAtRest(source, options);
  if (!atRest) return loader;
  const deferred = (files: string[], waitMs: number) =>
    options.log.debug(
      { files, wait_ms: waitMs },
      "manifest files changed within the settle time: read again",
    );
  return {
    loadTree: (root) => atRest.load(() => loader.loadTree(root), deferred),
    async close() {
      await loader.close();
      await atRest.close();
    },
  };
}

export function createReadAtRest(options: {
  root: string;
  settleMs: number;
  warn: (files: string[], waitedMs: number) => void;
  /** The controller stops: the read is returned at once (the scan then uses nothing). */
  stopping: () => boolean;
}): ReadAtRest {
  const { root, settleMs } = options;
  let clock: Promise<FileClock> | undefined;
  /** The files of the last read used: one cut to a prefix without a document is looked at too. */
  let known = new Set<string>();

  /** The files changed after `since` (file clock), with the newest change among them. */
  const young = async (files: readonly string[], since: number) => {
    const found: string[] = [];
    let newest = -Infinity;
    // STAT_BATCH at once: one after another, 10,000 stats took longer than needed on libuv's pool.
    for (let i = 0; i < files.length; i += STAT_BATCH) {
      const batch = files.slice(i, i + STAT_BATCH);
      const infos = await Promise.all(
        batch.map((file) => stat(resolve(root, file)).catch(() => undefined)), // gone: its absence is the news
      );
      infos.forEach((info, j) => {
        if (!info || changedAt(info) <= since) return;
        found.push(batch[j]!);
        newest = Math.max(newest, changedAt(info));
      });
    }
    return { found, newest };
  };

  return {
    async load<T extends AtRestRead>(
      read: () => Promise<T>,
      deferred: (files: string[], waitMs: number) => void,
    ) {
      const fileClock = await (clock ??= openFileClock());
      for (let waited = 0; ;) {
        const from = await fileClock.now();
        const result = await read();
        const files = filesOf(result);
        const { found, newest } = await young([...new Set([...files, ...known])], from - settleMs);
        if (found.length > 0 && waited >= settleMs * MAX_WAIT_SETTLES) options.warn(found, waited);
        if (found.length === 0 || waited >= settleMs * MAX_WAIT_SETTLES || options.stopping()) {
          known = files;
          return result;
        }
        const waitMs = Math.max(1, Math.ceil(newest + settleMs - (await fileClock.now())));
        deferred(found, waitMs);
        await sleep(waitMs);
        waited += waitMs;
      }
    },
    async close() {
      await (await clock)?.close();
    },
  };
}
