// One run at a time: a call while a run is in progress shares its promise and asks for exactly one
// more run after it (however many calls came in), so a burst of triggers costs at most two runs.

export type Coalesced<A> = {
  run: (arg: A) => Promise<void>;
  /** Resolves when no run is in progress (at once when idle). */
  settled: () => Promise<void>;
};

/** `mayRepeat` is asked before the extra run (false while stopping: no new work). */
export function coalesce<A>(
  task: (arg: A) => Promise<void>,
  mayRepeat: () => boolean = () => true,
): Coalesced<A> {
  let running: Promise<void> | null = null;
  let again = false;
  return {
    run(arg) {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await task(arg);
        } while (again && mayRepeat());
      })().finally(() => (running = null));
      return running;
    },
    settled: () => running ?? Promise.resolve(),
  };
}
