import { randomBytes } from "node:crypto";
import { open, realpath, rename, rm, stat } from "node:fs/promises";

// A manifest rewritten by plumb (drift --write, promote --write) is replaced whole or not at all.
// Written in place (truncate, then write), a full disk stopped the write part-way and left the
// user's file cut short: a valid manifest of another value, as it happened, that the next apply
// would have sent.

/**
 * Writes `text` to a temporary file beside `path`'s real file (a symlink inside the root stays a
 * link), with its mode, synced, then renames it over the file. On failure the file is as it was
 * and the temporary file is gone.
 */
export async function replaceFileText(path: string, text: string): Promise<void> {
  const real = await realpath(path);
  const { mode } = await stat(real);
  const temp = `${real}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", mode & 0o777);
    try {
      await handle.writeFile(text, "utf8");
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, real);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
