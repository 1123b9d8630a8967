import { Gauge, Registry } from "prom-client";
import { isPlumbError } from "../errors.js";
import {
  describeHolder,
  lapsedWhileStopping,
  lockTargetOf,
  readStateLock,
  type StateLock,
} from "../lock/index.js";
import { acquireStateLocks } from "../lock/locks-in-order.js";
import { nearbyStoresInUse } from "../git/status/status-nearby.js";
import { manifestDirOf } from "../git/status/status-source.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import type { Logger } from "../logger.js";
import { errorMessage } from "./error-message.js";
import { defaultStoreToMark } from "./source/store-inside-dir.js";
import type { StatusLocation } from "../git/status/status-source.js";
import { buildObjectPage } from "../status-page/page-model.js";
import { buildStandbyHeader } from "../status-page/page-header.js";
import type { ControllerHttp } from "./http/http-server.js";
import type { PageRoutes } from "./http/page-routes.js";
import { startingHandlers } from "./http/startup-http.js";

// Leader election on the state lock: one controller per status store reconciles; any other stays
// up as a standby (/healthz 200, /readyz 503, plumb_leader 0), touches nothing, and takes the lock
// when the leader releases it (SIGTERM), dies on this host (its pid is gone), or stops renewing
// for the lease (another host). Only then does it read the status store and start.
//
// It also holds, for its life, the locks of the stores nearby in use (docs/status.md "Stores above
// and below"), as apply does for its run: a controller on TREE and one on TREE/sub (or `plumb apply
// TREE/sub`) both reconcile what is under sub, and each sent every change there. All are taken in
// one order, by path (lock/locks-in-order.ts): the later one is a standby (or refused) until the
// first lets go, and none waits holding a lock another needs first.

/**
 * The stores a controller of `location` locks besides its own: those nearby in use, and with
 * --status-dir X also the tree's default store as a mark. X is where no other writer looks: a
 * controller on TREE/sub --status-dir X and one on TREE (or `plumb apply TREE`) both sent every
 * change under sub. As `apply --status-dir` (cli/with-state-lock.ts).
 */
export const nearbyScanOf = (location: StatusLocation) => async (): Promise<string[]> => [
  ...(await nearbyStoresInUse(location.root, location.environment, gitRootOf(manifestDirOf(location.root)))),
  ...(location.statusDir !== undefined ? await defaultStoreToMark(location.root, location.environment) : []),
];

export type LeadershipOptions = {
  location: StatusLocation;
  /** The controller's HTTP side (bound before the clone): a standby answers on it. */
  http: ControllerHttp | undefined;
  statusToken: string | undefined;
  leaseMs: number | undefined;
  log: Logger;
  signal: AbortSignal | undefined;
  /**
   * Run once a standby has taken over, before it leads (a git source's fetch). It cloned when it
   * started, maybe hours before: reconciling that checkout first sent every deployment changed
   * since back to its old manifest. Failing, the lock is let go and the controller stops.
   */
  catchUp?: (() => Promise<unknown>) | undefined;
};

const COMMAND = "plumb controller";

/**
 * The state lock, once this controller leads; losing it later is logged (the controller stops).
 * A lease that lapsed only because the git remote stopped answering once the controller was told
 * to stop is no lock lost while leading: the stop's last line says it (shutdown.ts).
 */
export async function waitToLead(options: LeadershipOptions): Promise<StateLock> {
  const lock = await acquireLeadership(options);
  lock.lost.addEventListener("abort", () => {
    if (lapsedWhileStopping(lock.lost.reason, options.location.gitStop)) return;
    options.log.error({ err: errorMessage(lock.lost.reason) }, "lost the state lock: stopping");
  });
  return lock;
}

async function acquireLeadership(options: LeadershipOptions): Promise<StateLock> {
  const target = lockTargetOf(options.location);
  const lockOptions = {
    command: COMMAND,
    say: (line: string) => options.log.warn({ status_dir: target.statusDir }, line),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const scan = nearbyScanOf(options.location);
  let refused: string;
  try {
    return await acquireStateLocks(target, scan, lockOptions);
  } catch (error) {
    if (!isPlumbError(error) || error.code !== "state-locked") throw error;
    refused = error.message; // names the store held: its own, or one nearby
  }
  const leader = await readStateLock(target);
  const who = leader ? describeHolder(leader) : "another writer of a store nearby";
  options.log.warn(
    { leader: who, status_dir: target.statusDir, held: refused },
    "standby: another controller leads",
  );
  const http = options.http;
  if (http) {
    serveStandby(http, options, who);
    options.log.info(
      { url: http.url },
      "standby: serving the status page and /livez /readyz /metrics /status",
    );
  }
  try {
    const lock = await acquireStateLocks(target, scan, {
      ...lockOptions,
      timeoutMs: Number.POSITIVE_INFINITY,
    });
    options.log.info({}, "took over the state lock: leading");
    await options.catchUp?.().catch(async (error: unknown) => {
      await lock.release();
      throw error;
    });
    return lock;
  } finally {
    http?.use(startingHandlers("starting: took over the state lock", options.statusToken));
  }
}

function serveStandby(http: ControllerHttp, options: LeadershipOptions, leader: string): void {
  const registry = new Registry();
  new Gauge({
    name: "plumb_leader",
    help: "1 while this controller leads, 0 on standby",
    registers: [registry],
  }).set(0);
  const view = { ready: false, role: "standby", leader };
  // The status page says whose it is: this one reconciles nothing until it takes over.
  const page: PageRoutes = {
    header: () => ({
      ...buildStandbyHeader(options.location.root, "(not connected on standby)", new Date()),
      leader,
    }),
    objects: (query) => buildObjectPage([], query),
    detail: async () => null,
    subscribe: () => () => undefined,
  };
  http.use({
    page,
    ready: () => false,
    notReady: () => ({ role: "standby", leader }),
    registry,
    status: () => view,
    statusToken: options.statusToken,
    webhookSecret: undefined,
    onWebhook: () => undefined,
  });
}
