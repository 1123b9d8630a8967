import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";

// [safety] The local lock on a full disk (a small tmpfs filled up: root only, skipped elsewhere).
// Nothing may be left behind that is no one's lock, and the error says what to do.

let disk: string | undefined;
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "plumb-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
    disk = dir;
  } catch {
    await rm(dir, { recursive: true, force: true });
  }
});
afterAll(async () => {
  if (!disk) return;
  execFileSync("umount", [disk]);
  await rm(disk, { recursive: true, force: true });
});

/** Fills the disk but for `blocks` of its blocks. */
async function fillBut(blocks: number) {
  const { bavail, bsize } = await statfs(disk!);
  await writeFile(join(disk!, "fill"), Buffer.alloc((bavail - blocks) * bsize));
}

it.skipIf(process.getuid?.() !== 0)(
  "room for the lock but not for its holder record for an older plumb: lock given back, nothing left, the fix said",
  async () => {
    if (!disk) return; // no tmpfs here (a container without the right to mount)
    const store = join(disk, "tree", ".plumb");
    await mkdir(store, { recursive: true });
    await fillBut(1); // holder.json takes the last block; the record beside the lock finds none
    const statusDir = join(store, "status");
    await expect(acquireStateLock({ statusDir }, { command: "plumb apply" })).rejects.toMatchObject({
      code: "lock-io-error",
      message: expect.stringContaining(
        `${statusDir}.lock.json: no space left on the device (ENOSPC); plumb writes this holder record (for an older plumb) beside its lock ${statusDir}.lock: free space on that disk, or pass --status-dir`,
      ),
    });
    expect(await readdir(store)).toEqual([]);
    expect(await readStateLock({ statusDir })).toBeNull();
  },
);
