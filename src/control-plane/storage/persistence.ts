import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { fileError, PlumbError } from "../../errors.js";
import { groupCommitter, type Journal, type JournalFile, journalFile } from "./journal-writer.js";

// Durability: every acknowledged write is in an append-only journal that was fsynced before the
// reply. On start the snapshot and the journal are replayed, then compacted into a new snapshot
// (written atomically and fsynced) and the journal is emptied. The writer never leaves a torn
// line before a later record (journal-writer.ts), so a torn line can only be the last one: a
// write cut short by a kill or a failed append, never acknowledged, and ignored here.

export type JournalEntry = Record<string, unknown>;
export type { Journal } from "./journal-writer.js";
const SNAPSHOT = "state.json";
const JOURNAL = "journal.ndjson";

/** The journal holds an unreadable line before valid records: refuse to start rather than drop them. */
export class JournalCorruptError extends PlumbError {
  constructor(file: string, line: number, later: number) {
    super(
      "journal-corrupt",
      `${file}:${line}: unreadable journal record followed by ${later} valid one(s); refusing to start rather than drop them. Inspect the file (a torn write would only ever be the last line), fix or remove that line, and start again.`,
    );
    this.name = "JournalCorruptError";
  }
}

/** Parses the journal: complete records, a torn last line ignored, anything else refused. */
export function parseJournal(text: string, file = JOURNAL): JournalEntry[] {
  const lines = text.split("\n");
  const entries: JournalEntry[] = [];
  for (const [index, line] of lines.entries()) {
    if (!line) continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      const later = lines.slice(index + 1).filter((l) => l !== "").length;
      if (later > 0) throw new JournalCorruptError(file, index + 1, later);
    }
  }
  return entries;
}

/** Reads the snapshot (or undefined) and every complete journal entry after it. */
export async function loadState(dir: string): Promise<{ snapshot: unknown; entries: JournalEntry[] }> {
  const fix = "--data must name a directory the control plane can write (it is created if missing)";
  try {
    // Owner-only, as a database's data directory (PostgreSQL's is 0700): it holds what tenants sent,
    // agent-server threads and store items among it (secret values never: only their names).
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const isFile = (error as NodeJS.ErrnoException).code === "EEXIST";
    throw isFile
      ? new PlumbError("data-dir-invalid", `${dir} is a file, not a directory; ${fix}`)
      : fileError("data-dir-invalid", dir, error, fix);
  }
  const read = (file: string) =>
    readFile(join(dir, file), "utf8")
      .catch(missingAsEmpty)
      .catch((error: unknown) => {
        throw fileError("data-dir-invalid", join(dir, file), error, fix);
      });
  const snapshotText = await read(SNAPSHOT);
  const journalText = await read(JOURNAL);
  const entries = parseJournal(journalText, join(dir, JOURNAL));
  return { snapshot: snapshotText ? (JSON.parse(snapshotText) as unknown) : undefined, entries };
}

/** Tests wrap the journal's file to inject failures; the default is the file itself. */
export type WrapJournalFile = (file: JournalFile) => JournalFile;

/** Writes the compacted snapshot durably, then starts an empty journal. */
export async function openJournal(
  dir: string,
  snapshot: unknown,
  wrap: WrapJournalFile = (file) => file,
): Promise<Journal> {
  await writeFileAtomic(join(dir, SNAPSHOT), JSON.stringify(snapshot), { fsync: true, mode: 0o600 });
  await syncDir(dir);
  const handle = await open(join(dir, JOURNAL), "w", 0o600);
  // A journal an older plumb created under the umask (0644) keeps its mode through open(): set it.
  await handle.chmod(0o600);
  await handle.sync();
  await syncDir(dir);
  return groupCommitter(wrap(journalFile(handle)), 0, join(dir, JOURNAL));
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
