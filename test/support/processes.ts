import { readdirSync, readFileSync } from "node:fs";

/** The pids of the processes whose command line holds `marker` (Linux's /proc): what a test left running. */
export function processesNaming(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "latin1").includes(marker)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
