import { mkdir, open, readFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";

// Durability: every acknowledged write is in an append-only journal that was fsynced before the
// reply. On start the snapshot and the journal are replayed, then compacted into a new snapshot
// (written atomically and fsynced) and the journal is emptied. A torn last line (kill -9 during
// a write that was never acknowledged) is ignored.

export type JournalEntry = Record<string, unknown>;
const SNAPSHOT = "state.json";
const JOURNAL = "journal.ndjson";

export type Journal = {
  /** Appends entries and resolves once they are on disk (concurrent appends share one fsync). */
  append(entries: JournalEntry[]): Promise<void>;
  close(): Promise<void>;
};

/** Reads the snapshot (or undefined) and every complete journal entry after it. */
export async function loadState(dir: string): Promise<{ snapshot: unknown; entries: JournalEntry[] }> {
  await mkdir(dir, { recursive: true });
  const snapshotText = await readFile(join(dir, SNAPSHOT), "utf8").catch(missingAsEmpty);
  const journalText = await readFile(join(dir, JOURNAL), "utf8").catch(missingAsEmpty);
  const entries: JournalEntry[] = [];
  for (const line of journalText.split("\n")) {
    if (!line) continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      break; // a torn tail: nothing after it was acknowledged
    }
  }
  return { snapshot: snapshotText ? (JSON.parse(snapshotText) as unknown) : undefined, entries };
}

/** Writes the compacted snapshot durably, then starts an empty journal. */
export async function openJournal(dir: string, snapshot: unknown): Promise<Journal> {
  await writeFileAtomic(join(dir, SNAPSHOT), JSON.stringify(snapshot), { fsync: true });
  await syncDir(dir);
  const handle = await open(join(dir, JOURNAL), "w");
  await handle.sync();
  await syncDir(dir);
  return groupCommitter(handle);
}

function groupCommitter(handle: FileHandle): Journal {
  let queue: Array<{ text: string; done: () => void; fail: (e: unknown) => void }> = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await handle.write(batch.map((b) => b.text).join(""));
        await handle.datasync();
        for (const b of batch) b.done();
      } catch (error) {
        for (const b of batch) b.fail(error);
      }
    }
    flushing = undefined;
  };
  return {
    append(entries) {
      if (entries.length === 0) return Promise.resolve();
      const text = entries.map((e) => `${JSON.stringify(e)}\n`).join("");
      const written = new Promise<void>((done, fail) => queue.push({ text, done, fail }));
      flushing ??= flush();
      return written;
    },
    async close() {
      await flushing;
      await handle.close();
    },
  };
}

async function syncDir(dir: string) {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function missingAsEmpty(error: unknown): string {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
  throw error;
}
