import { randomBytes } from "node:crypto";
import { open, realpath, rename, rm, stat } from "node:fs/promises";

// A manifest rewritten by plumb (drift --write, promote --write) is replaced whole or not at all.
// Written in place (truncate, then write), a full disk stopped the write part-way and left the
// user's file cut short: a valid manifest of another value, as it happened, that the next apply
// would have sent.

/** A new text written beside its file, not yet in place: `commit` renames it over, `discard` drops it. */
export type StagedReplacement = { commit: () => Promise<void>; discard: () => Promise<void> };

/**
 * Writes `text` to a temporary file beside `path`'s real file (a symlink inside the root stays a
 * link), with its mode, synced. On failure nothing is left behind.
 */
export async function stageFileText(path: string, text: string): Promise<StagedReplacement> {
  const real = await realpath(path);
  const { mode } = await stat(real);
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
  const commit = async () => {
    try {
      await rename(temp, real);
    } catch (error) {
      await discard();
      throw error;
    }
  };
  return { commit, discard };
}

/** Replaces `path`'s text whole: staged beside it, then renamed over it. On failure the file is as it was. */
export async function replaceFileText(path: string, text: string): Promise<void> {
  await (await stageFileText(path, text)).commit();
}
