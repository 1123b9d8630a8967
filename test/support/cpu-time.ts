// CPU time, not wall time, for the tests that bound what a synchronous computation costs ("linear
// on a hostile file", "100 fingerprints well under a second"): on a loaded machine (two test
// workers, other processes) a process waits for a core, and wall time grows with the load while
// the work does not. User + system time of this process, helper threads included.

/** Runs `work` and returns what it returned and the CPU milliseconds it took. */
export function withCpuTime<T>(work: () => T): { result: T; cpuMs: number } {
  const before = process.cpuUsage();
  const result = work();
  const used = process.cpuUsage(before);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}
