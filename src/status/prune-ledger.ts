import { appendFile, mkdir, open, rename } from "node:fs/promises";
import { join } from "node:path";
import { fileError } from "../errors.js";
import { type BootReading, isBootReading } from "./boot-clock.js";
import { readStateFile } from "./state-file.js";

// The deletions --prune made, kept in the status directory so that --prune-max bounds deletions
// per --prune-window across scans, commits, commands and restarts (docs/status.md "Prune").
// One JSON line per deletion, appended: a crash tears at most the last line, which is skipped.
// The name does not end in .json, so the record loaders never read it as a status record.

export const PRUNE_LEDGER_FILE = "prune-ledger.jsonl";

export type PruneEntry = {
  at: string;
  kind: string;
  name: string;
  id: string;
  /** The clock since boot when it was counted (boot-clock.ts); absent in older entries and off Linux. */
  boot?: BootReading;
};

/** Entries older than this are dropped when the ledger is rewritten (longer than any sane window). */
const KEEP_MS = 7 * 24 * 3_600_000;
const REWRITE_OVER = 1_000;
/** A week of deletions is a few thousand lines; a larger file is not read (state-file.ts). */
const MAX_LEDGER_BYTES = 16 * 1024 * 1024;

const isEntry = (value: unknown): value is PruneEntry => {
  const v = value as Partial<PruneEntry> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.at === "string" &&
    typeof v.kind === "string" &&
    typeof v.name === "string" &&
    typeof v.id === "string"
  );
};

/**
 * Every readable entry; a missing ledger is empty. One that is not a regular file (a FIFO, which
 * blocked apply --prune for ever), a link or too large is status-unreadable, naming it.
 */
export async function readPruneLedger(statusDir: string): Promise<PruneEntry[]> {
  const file = join(statusDir, PRUNE_LEDGER_FILE);
  let text: string;
  try {
    text = await readStateFile(file, MAX_LEDGER_BYTES, "the prune ledger");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw fileError(
      "status-unreadable",
      file,
      error,
      "plumb writes this ledger of --prune deletions itself: remove what is there, or pass --status-dir",
    );
  }
  return parsePruneLedger(text);
}

/** The entries of a ledger's text (the status branch's copy too). */
function parsePruneLedger(text: string): PruneEntry[] {
  const entries: PruneEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isEntry(value)) entries.push(value);
    } catch {
      // a torn last line (a crash while appending): that deletion is counted by nobody, once
    }
  }
  return entries;
}

/**
 * The entries within `windowMs` before `now`, by the wall clock or, for an entry of the same boot as
 * `here`, by the clock since boot: either one counting it is enough. A wall clock stepped forward
 * past the window (NTP correcting a clock behind, a skewed host) made the deletions just counted
 * look old and freed the budget at once; one stepped back sees them in the future, still counted.
 */
export const deletionsWithin = (
  entries: readonly PruneEntry[],
  now: number,
  windowMs: number,
  here?: BootReading,
): PruneEntry[] =>
  entries.filter((e) => {
    const at = Date.parse(e.at);
    const sameBoot = here !== undefined && isBootReading(e.boot) && e.boot.id === here.id;
    return (Number.isFinite(at) && at > now - windowMs) || (sameBoot && here.ms - e.boot!.ms < windowMs);
  });

/**
 * When the ledger's old entries are dropped: KEEP_MS before the latest of them, never later than
 * `now`. Judged by `now` alone, a writer whose clock ran a week ahead (another machine on the status
 * branch) dropped every entry and with them the budget of the machines whose clocks are right.
 */
const keepFrom = (entries: readonly PruneEntry[], now: number): number =>
  Math.min(now, Math.max(...entries.map((e) => Date.parse(e.at)).filter(Number.isFinite), -Infinity));

/** Appends one deletion, durably; a long ledger is rewritten without its old entries first. */
export async function recordPruneDeletion(statusDir: string, entry: PruneEntry): Promise<void> {
  await mkdir(statusDir, { recursive: true });
  const file = join(statusDir, PRUNE_LEDGER_FILE);
  const entries = await readPruneLedger(statusDir);
  if (entries.length >= REWRITE_OVER) {
    const kept = deletionsWithin(entries, keepFrom(entries, Date.parse(entry.at)), KEEP_MS, entry.boot);
    const temp = `${file}.tmp`;
    await writeDurably(temp, kept.map((e) => `${JSON.stringify(e)}\n`).join(""));
    await rename(temp, file);
  }
  await appendFile(file, `${JSON.stringify(entry)}\n`);
  const handle = await open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Adds the entries of another copy of the ledger (the status branch's: an earlier CI run, another
 * pod) that this directory lacks, so both count them and the next publish carries the union.
 */
export async function mergePruneLedger(statusDir: string, text: string): Promise<void> {
  const local = await readPruneLedger(statusDir);
  const key = (e: PruneEntry) => `${e.at} ${e.kind}/${e.name} ${e.id}`;
  const known = new Set(local.map(key));
  const added = parsePruneLedger(text).filter((e) => !known.has(key(e)));
  if (added.length === 0) return;
  await mkdir(statusDir, { recursive: true });
  const file = join(statusDir, PRUNE_LEDGER_FILE);
  const all = [...local, ...added].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  await writeDurably(`${file}.tmp`, all.map((e) => `${JSON.stringify(e)}\n`).join(""));
  await rename(`${file}.tmp`, file);
}

async function writeDurably(file: string, text: string): Promise<void> {
  const handle = await open(file, "w");
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
