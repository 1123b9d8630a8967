import { unlinkSync, watch } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { checkStatusDirWritable } from "../../src/status/status-store.js";

// The writable check's probe file is named by the process's pid, which is not unique across PID
// namespaces: two containers sharing a volume can each run plumb as the same pid, and both apply to
// one store. One of them removing the probe between the other's write and removal is no failure.

let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "plumb-st-probe-")), "status");
  await mkdir(dir, { recursive: true });
});
afterEach(() => rm(join(dir, ".."), { recursive: true, force: true }));

it("a probe removed by another process before its own removal still passes the check", async () => {
  const probe = `.plumb-probe-${process.pid}`;
  let removedByOther = false;
  // The other process: removes the probe as soon as it appears (the event comes while the check's
  // write is still closing the file, a thread-pool round trip before its removal).
  const other = watch(dir, (_event, name) => {
    if (name !== probe || removedByOther) return;
    try {
      unlinkSync(join(dir, probe));
      removedByOther = true;
    } catch {
      // not there (yet, or any more)
    }
  });
  try {
    await checkStatusDirWritable(dir);
  } finally {
    other.close();
  }
  expect(removedByOther).toBe(true);
  expect(await readdir(dir)).toEqual([]);
});
