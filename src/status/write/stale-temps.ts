import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { processRunning } from "../../process-running.js";

// What a killed writer leaves in a status directory. A record is written as RECORD.json.<pid>.<hex>.tmp
// and renamed over (write-atomically.ts); apply's probe is .plumb-probe-<pid> (status-store.ts). A
// writer killed between the two (kill -9, an OOM kill, a CI job cancelled) leaves its temp file; the
// loader never reads it (*.json only), nothing else removed it, and a store piled them up for ever
// (each may hold salted fingerprints of secret values). The writer that takes the state lock removes
// them (lock/local/local-lock.ts): those whose process is gone from this host and that are a minute
// old at least, and any a day old (a pid since reused). A temp file of a write in flight is never a
// minute old; one of another PID namespace's live writer (a container sharing the directory) judged
// gone costs that writer one retry (save-records.ts writes again when its rename finds no file).

const TEMP = /^.+\.json\.(\d+)\.[0-9a-f]{12}\.tmp$/;
const PROBE = /^\.plumb-probe-(\d+)$/;
/** A temp file of a process gone is removed once this old. */
const STALE_TEMP_MS = 60_000;
/** Any temp file is removed once this old, whatever its pid (reused by another process). */
const ABANDONED_TEMP_MS = 24 * 3_600_000;

/** Removes the temp files killed writers left in the status directory `dir`; best effort. Returns their names. */
export async function removeStaleTemps(dir: string, now = Date.now()): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const pid = (TEMP.exec(name) ?? PROBE.exec(name))?.[1];
    if (pid === undefined) continue;
    const file = join(dir, name);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) continue;
    const age = now - info.mtimeMs;
    const stale = age >= ABANDONED_TEMP_MS || (age >= STALE_TEMP_MS && !processRunning(Number(pid)));
    if (!stale) continue;
    await rm(file, { force: true }).then(
      () => removed.push(name),
      () => undefined,
    );
  }
  return removed;
}
