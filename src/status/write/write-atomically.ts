import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";

// One record's file written atomically and durably (save-records.ts writes each record through it).

/**
 * Temp file, data fsync, rename, directory fsync: a reader sees the old record or the new one,
 * never half of one, and a power loss after it returns keeps the new one.
 * Not write-file-atomic: it resolves the target's real path first (fs.realpath's JS walk, an
 * lstat per path component) and chmods and stats; with three records per object that was most
 * of the controller's file work at 10,000 objects. Status files are ours and never symlinks.
 * A temp file left by a kill -9 ends in `.tmp`: ignored by loadStatusStore (*.json only), and
 * removed by the next holder of the state lock once its process is gone (stale-temps.ts).
 */
export async function writeRecordFile(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  // Owner-only: a record holds salted fingerprints of secret values (docs/security.md).
  const handle = await open(temp, "wx", 0o600);
  try {
    try {
      // Stryker disable next-line StringLiteral: equivalent, node reads an empty encoding as utf8
      await handle.writeFile(text, "utf8");
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    // A full disk fails every later write too (each apply, each reconcile): none leaves its file.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, open() made the temp file: it exists
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dirname(file));
}

/**
 * A rename is durable only once its directory is: without this fsync a power loss can forget it
 * (the old record, or none, comes back). Windows cannot open a directory to sync it.
 */
async function syncDirectory(dir: string): Promise<void> {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: equivalent off Windows, where the tests run
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
