import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { processRunning } from "../../process-running.js";

// A manifest rewrite (promote --write, drift --write, import) stages its text beside the file as
// FILE.<pid>.<hex>.tmp, then renames it over. A run killed between the two (kill -9, OOM, a CI job
// cancelled) leaves the temp file; nothing else removes it. The loader never reads it (its name
// does not end in .yaml or .yml), but it piles up beside the manifests and may hold a secret's
// literal value. The next rewrite into the same directory removes those whose process is gone on
// this host; one whose process still runs (a rewrite in flight) is kept.

const TEMP = /^.+\.ya?ml\.(\d+)\.[0-9a-f]{12}\.tmp$/i;

/** Removes the temp files of manifest rewrites in `dir` whose process is gone; best effort. */
export async function removeStaleTempFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = TEMP.exec(name)?.[1];
    if (pid === undefined || processRunning(Number(pid))) continue;
    await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}
