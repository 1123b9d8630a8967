import type { GitStop } from "../../git/stoppable-git.js";
import { lapsedWhileStopping } from "../../lock/index.js";
import type { Logger } from "../../logger.js";
import type { ControllerOptions } from "../controller-types.js";
import { errorMessage } from "../error-message.js";
import type { ControllerMetrics } from "../http/metrics.js";
import { createNotifier, type Notifier } from "./notifier.js";
import type { Timers } from "../queue/work-queue.js";

// The controller's --notify: a notifier when URLs are given (undefined otherwise), counted in the
// metrics, and the lock-lost event when the state lock goes: not when its lease lapsed only because
// the git remote stopped answering once the controller was told to stop (no one took the lock: it
// stopped as asked, and its last log line says so; docs/controller.md).

export function startControllerNotifier(deps: {
  notify: ControllerOptions["notify"];
  /** The status page's address for links; read per event (HTTP binds after this starts). */
  pageUrl: () => string | undefined;
  lockLost: AbortSignal;
  /** The controller's stop as its git commands see it: a lapse after it, unanswered, is no loss. */
  gitStop?: GitStop | undefined;
  /** With environments: the environment whose events these are (on each event and in its text). */
  environment?: string | undefined;
  metrics: Pick<ControllerMetrics, "notified">;
  timers: Timers;
  log: Logger;
  fetch?: typeof fetch | undefined;
}): Notifier | undefined {
  const { notify } = deps;
  if (!notify?.urls.length) return undefined;
  const created = createNotifier({
    urls: notify.urls,
    secret: notify.secret,
    get pageUrl() {
      return notify.pageUrl ?? deps.pageUrl();
    },
    timers: deps.timers,
    log: deps.log,
    fetch: deps.fetch,
    counted: (event, result) => deps.metrics.notified(event, result),
    ...(notify.backoffBaseMs ? { backoffBaseMs: notify.backoffBaseMs } : {}),
  });
  const { environment } = deps;
  const notifier: Notifier = environment
    ? { notify: (event) => created.notify({ ...event, environment }), drain: (ms) => created.drain(ms) }
    : created;
  deps.lockLost.addEventListener("abort", () => {
    if (lapsedWhileStopping(deps.lockLost.reason, deps.gitStop)) return;
    notifier.notify({
      event: "lock-lost",
      object: null,
      id: null,
      revision: null,
      fields: [],
      message: `lost the state lock: stopped reconciling (${errorMessage(deps.lockLost.reason)})`,
    });
  });
  return notifier;
}
