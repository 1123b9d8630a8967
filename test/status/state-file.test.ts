import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readLockDir } from "../../src/lock/local/lock-dir.js";
import { PRUNE_LEDGER_FILE, readPruneLedger } from "../../src/status/prune-ledger.js";
import { readStateFile, readStateFileSync } from "../../src/status/state-file.js";
import { loadStatusStore } from "../../src/status/status-store.js";

// Files plumb reads back from its state directory (records, the prune ledger, lock records) are
// opened without blocking, must be regular files, not links, and are read up to a bound: a FIFO
// there blocked the command for ever (test/cli/state-dir-fifo.e2e.test.ts runs the built CLI).

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-state-file-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const fifo = (path: string) => execFileSync("mkfifo", [path]);
const both = (path: string, limit = 64) => [
  () => Promise.resolve().then(() => readStateFileSync(path, limit, "a record")),
  () => readStateFile(path, limit, "a record"),
];

describe("readStateFile and readStateFileSync", () => {
  it("read a regular file whole", async () => {
    await writeFile(join(dir, "a"), "é".repeat(32));
    for (const read of both(join(dir, "a"))) await expect(read()).resolves.toBe("é".repeat(32));
  });

  it("refuse what is no regular file, in words, without blocking", async () => {
    fifo(join(dir, "fifo"));
    await mkdir(join(dir, "dir"));
    await writeFile(join(dir, "target"), "sk-live-TOKEN");
    await symlink(join(dir, "target"), join(dir, "link"));
    const cases: Array<[string, string]> = [
      [join(dir, "fifo"), "a FIFO (named pipe), not a regular file"],
      [join(dir, "dir"), "a directory, not a regular file"],
      ["/dev/null", "a device, not a regular file"],
      [join(dir, "link"), "a symbolic link, not a record"],
    ];
    for (const [path, reason] of cases)
      for (const read of both(path)) await expect(read()).rejects.toThrow(reason);
  });

  it("refuse a file over the limit", async () => {
    await writeFile(join(dir, "big"), "x".repeat(65));
    for (const read of both(join(dir, "big"))) await expect(read()).rejects.toThrow("larger than 64 bytes");
  });
});

describe("the state directory's readers", () => {
  it("a FIFO as a status record is a problem naming it; the other records load", async () => {
    fifo(join(dir, "deployment.a.json"));
    const { problems } = await loadStatusStore(dir);
    expect(problems).toEqual([
      {
        file: join(dir, "deployment.a.json"),
        message: "not readable: a FIFO (named pipe), not a regular file",
      },
    ]);
  });

  it("a FIFO as the prune ledger is status-unreadable, naming it", async () => {
    fifo(join(dir, PRUNE_LEDGER_FILE));
    await expect(readPruneLedger(dir)).rejects.toMatchObject({
      code: "status-unreadable",
      message: expect.stringContaining(
        `${join(dir, PRUNE_LEDGER_FILE)}: a FIFO (named pipe), not a regular file`,
      ),
    });
  });

  it("a FIFO as a lock's holder record is no holder", async () => {
    const lock = join(dir, "status.lock");
    await mkdir(lock);
    fifo(join(lock, "holder.json"));
    await writeFile(join(lock, "beat-x-0"), "");
    await expect(readLockDir(lock)).resolves.toMatchObject({ holder: null, token: "beat-x-0" });
  });
});
