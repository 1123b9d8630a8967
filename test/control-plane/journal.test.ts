import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JournalFile, JournalWriteError } from "../../src/control-plane/storage/journal-writer.js";
import {
  JournalCorruptError,
  loadState,
  openJournal,
  parseJournal,
} from "../../src/control-plane/storage/persistence.js";

// The journal on a real file, with failures injected into the file operations: a write that stops
// half-way with ENOSPC (as a full disk does), a short write, a failed fsync, a failed truncate.
// Whatever fails, every acknowledged append must be read back after a restart.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-journal-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

/** Fails the writes whose 1-based numbers are in `torn`: writes half the bytes, then throws. */
function faulty(options: {
  torn?: number[];
  short?: boolean;
  syncFails?: number[];
  truncateFails?: boolean;
}) {
  let writes = 0;
  let syncs = 0;
  return (file: JournalFile): JournalFile => ({
    async write(data, position) {
      writes++;
      if (options.torn?.includes(writes)) {
        await file.write(data.subarray(0, Math.ceil(data.length / 2)), position);
        throw enospc();
      }
      // A short write: the OS took only part of the buffer and said so (no error).
      if (options.short && data.length > 1) return file.write(data.subarray(0, 3), position);
      return file.write(data, position);
    },
    async datasync() {
      syncs++;
      if (options.syncFails?.includes(syncs))
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      return file.datasync();
    },
    async truncate(length) {
      if (options.truncateFails) throw Object.assign(new Error("EIO: i/o error, ftruncate"), { code: "EIO" });
      return file.truncate(length);
    },
    close: () => file.close(),
  });
}

/** Appends each entry in turn; returns those acknowledged (the append resolved). */
async function appendAll(journal: Awaited<ReturnType<typeof openJournal>>, count: number) {
  const acknowledged: number[] = [];
  const failures: unknown[] = [];
  for (let n = 1; n <= count; n++) {
    await journal.append([JSON.stringify({ n })]).then(
      () => acknowledged.push(n),
      (error: unknown) => failures.push(error),
    );
  }
  await journal.close();
  return { acknowledged, failures };
}

const reloaded = async () => (await loadState(dir)).entries.map((e) => e.n as number);

describe("journal: a failed append never costs an acknowledged one", () => {
  it("a write torn by ENOSPC is cut off and dropped (its caller undoes it); later writes all survive", async () => {
    const journal = await openJournal(dir, {}, faulty({ torn: [2] }));
    const { acknowledged, failures } = await appendAll(journal, 4);
    expect(acknowledged).toEqual([1, 3, 4]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(JournalWriteError);
    expect((failures[0] as JournalWriteError).fatal).toBe(false);
    expect((failures[0] as Error).message).toMatch(/ENOSPC.*not acknowledged and was undone/);
    expect(await reloaded()).toEqual([1, 3, 4]);
  });

  it("appends queued behind a failed one fail with it, unwritten; the next append starts clean", async () => {
    const journal = await openJournal(dir, {}, faulty({ torn: [2] }));
    await journal.append(['{"n":1}']);
    // 2 is being written when 3 and 4 arrive: they wait for the next batch, built on 2.
    const outcomes = await Promise.allSettled([
      journal.append(['{"n":2}']),
      journal.append(['{"n":3}']),
      journal.append(['{"n":4}']),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
    await journal.append(['{"n":5}']);
    await journal.close();
    expect(await reloaded()).toEqual([1, 5]);
  });

  it("a failed fsync cuts the written bytes back too", async () => {
    const journal = await openJournal(dir, {}, faulty({ syncFails: [2] }));
    const { acknowledged } = await appendAll(journal, 3);
    expect(acknowledged).toEqual([1, 3]);
    expect(await reloaded()).toEqual([1, 3]);
  });

  it("short writes are completed, not acknowledged half-written", async () => {
    const journal = await openJournal(dir, {}, faulty({ short: true }));
    const { acknowledged } = await appendAll(journal, 3);
    expect(acknowledged).toEqual([1, 2, 3]);
    expect(await reloaded()).toEqual([1, 2, 3]);
  });

  it("when the torn tail cannot be cut, no later write is accepted, so the torn line stays last", async () => {
    const journal = await openJournal(dir, {}, faulty({ torn: [2], truncateFails: true }));
    const { acknowledged, failures } = await appendAll(journal, 4);
    expect(acknowledged).toEqual([1]);
    expect(failures.every((f) => f instanceof JournalWriteError && f.fatal)).toBe(true);
    const text = await readFile(join(dir, "journal.ndjson"), "utf8");
    expect(text.startsWith('{"n":1}\n{"n"')).toBe(true); // the torn half of 2 is there, last
    expect(await reloaded()).toEqual([1]);
  });
});

describe("parseJournal", () => {
  it("ignores a torn last line (a write cut short, never acknowledged)", () => {
    expect(parseJournal('{"n":1}\n{"n":2}\n{"n"')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("refuses to start, naming the line, when valid records follow an unreadable one", () => {
    expect(() => parseJournal('{"n":1}\n{"n\n{"n":3}\n', "j.ndjson")).toThrow(JournalCorruptError);
    expect(() => parseJournal('{"n":1}\n{"n\n{"n":3}\n', "j.ndjson")).toThrow(/j\.ndjson:2: .*1 valid/);
  });
});
