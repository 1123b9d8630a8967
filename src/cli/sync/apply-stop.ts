import { setMaxListeners } from "node:events";

// How a running apply is stopped: Ctrl-C, SIGTERM or a lost state lock abort the one signal every
// request in flight listens on. What was sent is recorded, so running apply again finishes it.

type StopSignalName = "SIGINT" | "SIGTERM";

export type ApplyStop = {
  /** Aborted on Ctrl-C, SIGTERM or when another writer takes the state lock. */
  signal: AbortSignal;
  /** The process signal that stopped the apply, or null. */
  signalName(): StopSignalName | null;
  /** Stops listening: the end of the apply. */
  dispose(): void;
};

export function listenForStop(
  signals: Pick<NodeJS.Process, "once" | "removeListener">,
  lockLost: AbortSignal,
  log: { write(text: string): unknown },
): ApplyStop {
  const controller = new AbortController();
  // Every request in flight listens on this one signal.
  setMaxListeners(0, controller.signal);
  let signalName: StopSignalName | null = null;
  const onSignal = (name: StopSignalName) => () => {
    signalName = name;
    log.write(`\nplumb: ${name}: stopping; what was sent is recorded, run apply again to finish\n`);
    controller.abort(new Error(name));
  };
  const onInt = onSignal("SIGINT");
  const onTerm = onSignal("SIGTERM");
  signals.once("SIGINT", onInt);
  signals.once("SIGTERM", onTerm);
  // Another writer took the store (forced unlock): stop sending, as on Ctrl-C.
  const onLost = () => {
    log.write(`\nplumb: ${(lockLost.reason as Error).message}: stopping [lock-lost]\n`);
    controller.abort(lockLost.reason);
  };
  lockLost.addEventListener("abort", onLost, { once: true });
  return {
    signal: controller.signal,
    signalName: () => signalName,
    dispose: () => {
      signals.removeListener("SIGINT", onInt);
      signals.removeListener("SIGTERM", onTerm);
      lockLost.removeEventListener("abort", onLost);
    },
  };
}
