import { readApiOptions } from "../../api/config.js";
import { allowedOriginsFrom } from "../../api/allowed-origins.js";
import { startController } from "../../controller/controller.js";
import { PlumbError } from "../../errors.js";
import { createLogger } from "../../logger.js";
import { originOf } from "../../controller/notify/notify-send.js";
import { environmentApiReader } from "../environments.js";
import type { ControllerRestart } from "./heap-tuning.js";
import {
  type Flags,
  listenSettings,
  notifySecret,
  notifyUrls,
  sourceOf,
  statusToken,
  webhookSecret,
} from "./controller-settings.js";
import { buildLogStream } from "./log-stream.js";

// `plumb controller` once its flags are read and the process has its heap settings
// (controller.ts): loaded only then, so the restart with them (heap-tuning.ts) does not load the
// controller's modules twice.

/** Runs the controller until a signal or the loss of its lock. */
export async function runController(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  signals: Signals,
  unappliedHeapSettings?: ControllerRestart,
): Promise<void> {
  const source = sourceOf(flags, env);
  const listen = listenSettings(flags, statusToken(flags, env));
  // A bad PLUMB_ALLOWED_API_ORIGINS entry is a usage error at startup, not each environment's failure.
  allowedOriginsFrom(flags, env);
  // Read when the tree turns out to define no environment (each environment has its own settings).
  const api = () => readApiOptions(env, flags);
  // Readable lines on a terminal, JSON lines for log collectors (PLUMB_LOG_FORMAT overrides).
  const logger = createLogger({ name: "plumb-controller" }, buildLogStream({ stdout: process.stdout, env }));
  // An Environment's api_url, api_key, tenant_id, mode and platform_url, as plan --env reads them;
  // with --allow-api-origin / PLUMB_ALLOWED_API_ORIGINS one naming another origin is refused unread.
  const environmentApi = environmentApiReader(flags, env, () =>
    logger.warn(
      {},
      "following Environments that name their own api_url and api_key, and no --allow-api-origin or PLUMB_ALLOWED_API_ORIGINS is set: a merged Environment can send a key file this process reads to a server of its author's choosing; set the allowlist (docs/security.md)",
    ),
  );
  if (unappliedHeapSettings)
    logger.warn(
      { node: process.version, nodeFlags: unappliedHeapSettings.flags, env: unappliedHeapSettings.env },
      "small memory limit, but this Node cannot restart itself with the heap settings for it (22.15+ can): set them in NODE_OPTIONS and the environment",
    );
  if (flags.notify.length > 0)
    logger.warn(
      { receivers: flags.notify.map((url) => originOf(url)) },
      "--notify on the command line: a webhook URL is a credential, and ps, shell history and CI logs show argv; give it in --notify-file or PLUMB_NOTIFY_URLS",
    );
  if (flags.insecureStatus && !statusToken(flags, env))
    logger.warn(
      { listen: flags.listen },
      "--insecure-status: /status and the status page are open to anyone who reaches --listen",
    );
  // Signals are heard from the start: a standby waiting for the lock stops on SIGTERM too.
  const { stopping, signal } = listenForSignals(signals);
  let controller: Awaited<ReturnType<typeof startController>>;
  try {
    controller = await startController({
      ...controllerSettings(flags, env),
      source,
      api,
      environmentApi,
      listen,
      signal: stopping.signal,
      logger,
    });
  } catch (error) {
    if (stopping.signal.aborted) {
      logger.info({}, "stopped while on standby");
      return;
    }
    throw error;
  }
  // Lost already during startup (e.g. its fence lapsed) or later.
  const lost = new Promise<"lock-lost">((resolveLost) =>
    controller.lockLost.aborted
      ? resolveLost("lock-lost")
      : controller.lockLost.addEventListener("abort", () => resolveLost("lock-lost"), { once: true }),
  );
  const reason = await Promise.race([signal, lost]);
  if (reason === "lock-lost") {
    // Another controller has the store now: stop at once; the supervisor restarts this one as a standby.
    await controller.stop(0);
    throw new PlumbError(
      "lock-lost",
      "lost the state lock (another controller or plumb unlock --force took it); stopped reconciling, restart to stand by",
    );
  }
  logger.info({ signal: reason }, "signal received");
  await stopGracefully(controller, signals, flags.shutdownGrace, logger);
}

type Signals = Pick<NodeJS.Process, "once" | "on" | "removeListener">;

/** The first SIGTERM or SIGINT: aborts `stopping` and resolves `signal` with its name. */
function listenForSignals(signals: Signals) {
  const stopping = new AbortController();
  const signal = new Promise<NodeJS.Signals>((resolveSignal) => {
    const on = (name: NodeJS.Signals) => () => {
      stopping.abort(new Error(name));
      resolveSignal(name);
    };
    signals.once("SIGTERM", on("SIGTERM"));
    signals.once("SIGINT", on("SIGINT"));
  });
  return { stopping, signal };
}

/** The controller's settings that come straight from the flags and the environment. */
function controllerSettings(flags: Flags, env: NodeJS.ProcessEnv) {
  return {
    environments: flags.env,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    webhookSecret: webhookSecret(flags, env),
    driftSchedule: flags.driftSchedule,
    selfHeal: Boolean(flags.selfHeal),
    prune: Boolean(flags.prune),
    driftBranch: flags.driftBranch,
    promoteBranchPrefix: flags.promoteBranchPrefix,
    pruneMax: flags.pruneMax,
    pruneWindowMs: flags.pruneWindow,
    pruneDelayMs: flags.pruneDelay,
    concurrency: flags.concurrency,
    debounceMs: flags.debounce,
    settleMs: flags.settle,
    backoffBaseMs: 5_000,
    backoffMaxMs: flags.backoffMax,
    timeoutMs: flags.timeout,
    pollIntervalMs: flags.pollInterval,
    apiRateLimit: flags.apiRateLimit,
    statusToken: statusToken(flags, env),
    notify: { urls: notifyUrls(flags, env), secret: notifySecret(flags, env), pageUrl: flags.publicUrl },
    lockLeaseMs: flags.lockLease,
    env,
  };
}

/** Lets running reconciles finish for `graceMs`; a second signal stops waiting. */
async function stopGracefully(
  controller: Awaited<ReturnType<typeof startController>>,
  signals: Signals,
  graceMs: number,
  logger: ReturnType<typeof createLogger>,
): Promise<void> {
  // A second signal abandons the wait for running reconciles (they resume on the next start).
  const hurry = () => logger.warn({}, "second signal: not waiting any longer");
  const stopped = controller.stop(graceMs);
  const force = new Promise<void>((resolveForce) => {
    const onAgain = () => {
      hurry();
      resolveForce();
    };
    signals.once("SIGTERM", onAgain);
    signals.once("SIGINT", onAgain);
    void stopped.then(() => {
      signals.removeListener("SIGTERM", onAgain);
      signals.removeListener("SIGINT", onAgain);
    });
  });
  await Promise.race([stopped, force]);
}
