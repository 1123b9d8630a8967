// One HTTP exchange's abort signal: the caller's signal or a timeout, whichever comes first.
//
// Why not AbortSignal.timeout + AbortSignal.any: a timeout signal lives (with its timer, and a
// weak reference registered on the caller's long-lived signal) until it fires, even when the
// exchange ended long before. At hundreds of requests a second and a 30 s timeout that held
// thousands of dead signals, ~12 MB of the controller's heap at 10,000 objects. Here the exchange
// releases its timer and listener as soon as it ends.

export type AbortableExchange = {
  signal: AbortSignal;
  /** True when the timeout (not the caller) aborted the exchange. */
  timedOut(): boolean;
  /** The exchange ended: clear the timer and stop listening to the caller's signal. */
  release(): void;
};

export function abortableExchange(timeoutMs: number, callerSignal?: AbortSignal): AbortableExchange {
  const controller = new AbortController();
  let timedOut = false;
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  const release = () => {
    clearTimeout(timer);
    callerSignal?.removeEventListener("abort", onCallerAbort);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    release();
    controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }, timeoutMs);
  timer.unref?.(); // like AbortSignal.timeout: a pending timeout never keeps the process alive
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
  return { signal: controller.signal, timedOut: () => timedOut && !callerSignal?.aborted, release };
}
