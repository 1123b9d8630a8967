import { randomBytes } from "node:crypto";
import { open, readFile, realpath, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { fileError, PlumbError } from "../../errors.js";
import { removeStaleTempFiles } from "./stale-temp-files.js";

// A manifest rewritten by plumb (drift --write, promote --write) is replaced whole or not at all.
// Written in place (truncate, then write), a full disk stopped the write part-way and left the
// user's file cut short: a valid manifest of another value, as it happened, that the next apply
// would have sent. And only over the text it was computed from: an edit saved (by the user, an
// editor, another run) between plumb's read and its rename was silently replaced by plumb's text.

/** A new text written beside its file, not yet in place: `commit` renames it over, `discard` drops it. */
type StagedReplacement = {
  /** Refuses (manifest-changed) when the file no longer holds the text the new one was computed from. */
  verify: () => Promise<void>;
  commit: () => Promise<void>;
  discard: () => Promise<void>;
};

/** One file's edit: `before`, the text read (and edited); `after`, the text to write. */
export type FileReplacement = { path: string; before: string; after: string };

const changedSince = (path: string) =>
  new PlumbError(
    "manifest-changed",
    `${path}: changed since plumb read it (saved meanwhile by an editor or another run); nothing was written, so that change is kept: run the command again`,
  );

/**
 * Writes `text` to a temporary file beside `path`'s real file (a symlink inside the root stays a
 * link), with its mode, synced. On failure nothing is left behind. `expected`: the text `text` was
 * computed from, which `verify` checks is still the file's (undefined: anything may be replaced).
 */
async function stageFileText(
  path: string,
  text: string,
  expected: string | undefined,
): Promise<StagedReplacement> {
  const real = await realpath(path);
  const { mode } = await stat(real);
  await removeStaleTempFiles(dirname(real)); // a killed run's, never one in flight
  const temp = `${real}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const discard = () => rm(temp, { force: true });
  try {
    const handle = await open(temp, "wx", mode & 0o777);
    try {
      await handle.writeFile(text, "utf8");
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await discard();
    throw error;
  }
  const verify = async () => {
    if (expected === undefined) return;
    const now = await readFile(real, "utf8").catch(() => null);
    if (now === expected) return;
    await discard();
    throw changedSince(path);
  };
  const commit = async () => {
    try {
      await rename(temp, real);
    } catch (error) {
      await discard();
      throw error;
    }
  };
  return { verify, commit, discard };
}

/**
 * Replaces `path`'s text whole, only when it still is `expected` (undefined: whatever it is):
 * staged beside it, checked, then renamed over it. On failure the file is as it was.
 */
export async function replaceFileText(
  path: string,
  text: string,
  expected: string | undefined,
): Promise<void> {
  const staged = await stageFileText(path, text, expected);
  await staged.verify();
  await staged.commit();
}

/**
 * Writes every file's new text, all or none as far as the disk allows: each is written and synced
 * beside its file first, then every file is checked to still hold the text its edit was computed
 * from (manifest-changed otherwise), and only then are they renamed over (one rename each). A file
 * that could not be written (a full disk, a file-size limit, no permission) or that changed leaves
 * every file as it was. `command` names the command in the errors ("promote --write").
 */
export async function replaceFilesText(files: readonly FileReplacement[], command: string): Promise<void> {
  const staged: StagedReplacement[] = [];
  try {
    for (const file of files)
      staged.push(
        await stageFileText(file.path, file.after, file.before).catch((error: unknown) => {
          throw fileError(
            "manifest-write-failed",
            file.path,
            error,
            `${command} needs to write the manifest files; nothing was written`,
          );
        }),
      );
    for (const s of staged) await s.verify();
  } catch (error) {
    await Promise.all(staged.map((s) => s.discard()));
    throw error;
  }
  for (const [i, s] of staged.entries())
    await s.commit().catch(async (error: unknown) => {
      await Promise.all(staged.slice(i + 1).map((rest) => rest.discard()));
      throw fileError(
        "manifest-write-failed",
        files[i]!.path,
        error,
        `${command} needs to write the manifest files`,
      );
    });
}
