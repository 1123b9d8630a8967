import { join } from "node:path";
import type { Clock } from "../../clock.js";
import { PlumbError } from "../../errors.js";
import { DEFAULT_LEASE_MS } from "../../lock/lock-types.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { resolveStatusDir } from "../../git/status/status-source.js";
import type { Controller, ControllerStartOptions } from "../controller-types.js";
import type { ControllerHttp } from "../http/http-server.js";
import { systemTimers } from "../queue/work-queue.js";
import { createManifestLoader } from "../snapshot/manifest-loader.js";
import { treeAtRest } from "../snapshot/read-at-rest.js";
import type { ManifestSource } from "../source/manifest-source.js";
import { startTriggers } from "../source/triggers.js";
import { environmentHandlers } from "./environment-http.js";
import { withEnvironmentHints } from "../../reconcile/environment-hints.js";
import { createEnvironmentLoad } from "./environment-load.js";
import { environmentsStatus } from "./environment-status.js";
import { createRebalance } from "./rebalance.js";
import { defaultReplicaId, startReplicas } from "./replicas.js";
import { type Context, leadersOf } from "./wiring/controller-context.js";
import { createScans } from "./wiring/trigger-scans.js";
import { claimOf } from "./wiring/environment-store.js";

// `plumb controller` on a tree that defines environments (docs/environments.md "The controller"):
// one store per environment (store.ts: its own API client and rate budget from its Environment, its
// state lock, status store P/.plumb/status/ENV/ — ENV/ on the status branch —, work queue and drift
// sweep), each claimed independently (environment-claim.ts), spread over the live replicas
// (rebalance.ts, replicas.ts). The source, its triggers, one read of the tree per trigger and the
// HTTP side are shared. Each trigger's read also says which environments git defines now
// (environment-roster.ts): one added starts, one removed stops, one whose connection changed restarts.
// Its parts are in wiring/: what they share, the triggers' scans, the roster followed, and one
// environment's claim and store.

export async function startEnvironmentController(
  options: ControllerStartOptions,
  shared: {
    source: ManifestSource;
    http: ControllerHttp | undefined;
    environments: readonly LoadedEnvironment[];
    clock: Clock;
  },
): Promise<Controller> {
  const environmentApi = checkEnvironmentOptions(options);
  const { source, http } = shared;
  const log = options.logger;
  const timers = options.timers ?? systemTimers;
  const leaseMs = options.lockLeaseMs ?? DEFAULT_LEASE_MS;
  const base = resolveStatusDir({ root: source.manifestRoot, statusDir: options.statusDir });
  const loader = treeAtRest(createManifestLoader(maxManifestBytesFrom(options.env), timers), source, {
    ...{ settleMs: options.settleMs, log, stopping: () => ctx.stopping },
  });
  const id = options.replicaId ?? defaultReplicaId();
  const replicas = await startReplicas({ dir: join(base, ".replicas"), id, leaseMs, log });
  const roster = new Map(shared.environments.map((e) => [e.manifest.metadata.name, e]));
  const ctx: Context = {
    ...{ options, source, http, log, base, leaseMs, environmentApi, roster },
    ...{ invalid: new Map(), refused: new Map() },
    ...{ claims: [], ending: new Set(), rescanOnceStarted: new Set(), stopping: false },
    tree: createEnvironmentLoad(
      (root) => loader.loadTree(root),
      (name) => ctx.roster.get(name),
    ),
    rebalance: createRebalance(
      () => ctx.claims.length,
      () => ctx.claims,
      replicas.live,
    ),
    nextDriftCheck: () => null,
  };
  const scans = createScans(ctx);
  const triggers = await startTriggers({
    source,
    intervalMs: options.source.kind === "git" ? options.source.intervalMs : undefined,
    debounceMs: options.debounceMs,
    driftSchedule: options.driftSchedule,
    ...{ scan: scans.scanAll, sync: scans.sync, checkDrift: scans.checkDrift, timers, log },
  }).catch(async (error: unknown) => {
    await replicas.stop(); // startup failed: this replica is not one of the live ones
    await loader.close();
    throw error;
  });
  ctx.nextDriftCheck = () => triggers.nextDriftCheck();
  for (const name of roster.keys()) ctx.claims.push(claimOf(ctx, name));
  ctx.rebalance.run();
  const ticker = setInterval(() => ctx.rebalance.run(), Math.max(100, leaseMs / 3));
  ticker.unref();
  const status = () =>
    environmentsStatus({
      ...{ claims: ctx.claims, source, replicas, share: ctx.rebalance.share },
      invalid: (name) => ctx.invalid.get(name),
    });
  http?.use(environmentHandlersOf(ctx, scans, status, shared.clock));
  log.info(
    { environments: ctx.claims.map((c) => c.name), replica: replicas.self, replicas: replicas.live() },
    "reconciling environments",
  );
  const stopParts = async (graceMs: number) => {
    clearInterval(ticker);
    await triggers.stop();
    await Promise.all([...ctx.claims.map((c) => c.stop(graceMs)), ...ctx.ending]);
    await replicas.stop();
    await loader.close();
  };
  return controllerOf(ctx, { ...scans, status, stopParts });
}

/** The HTTP side's view of the environments (environment-http.ts). */
function environmentHandlersOf(
  ctx: Context,
  scans: ReturnType<typeof createScans>,
  status: Controller["status"],
  clock: Clock,
) {
  const { options, log } = ctx;
  return environmentHandlers({
    claims: () => ctx.claims,
    environments: () => [...ctx.roster.values()],
    invalid: (name) => ctx.invalid.get(name),
    refused: (name) => ctx.refused.get(name),
    statusDirOf: (name) => join(ctx.base, name),
    ...{ status, statusToken: options.statusToken, webhookSecret: options.webhookSecret },
    ...{ sync: scans.sync, scanned: scans.scanned, clock, log },
  });
}

/** The options a controller of environments refuses or needs; its reader of Environment API settings. */
function checkEnvironmentOptions(options: ControllerStartOptions): Context["environmentApi"] {
  if (!options.environmentApi)
    throw new PlumbError(
      "api-config",
      "the manifests define environments, and no reader of their API settings was given",
    );
  return withEnvironmentHints(options.environmentApi);
}

function controllerOf(
  ctx: Context,
  parts: ReturnType<typeof createScans> & {
    status: Controller["status"];
    stopParts: (graceMs: number) => Promise<void>;
  },
): Controller {
  const leaders = () => leadersOf(ctx.claims);
  return {
    url: ctx.http?.url,
    manifestRoot: ctx.source.manifestRoot,
    // Settled: every environment led here has reconciled its first scan, and none is still starting.
    ready: () =>
      leaders().length > 0 &&
      leaders().every((c) => c.store()!.ready()) &&
      !ctx.claims.some((c) => c.role() === "starting"),
    status: parts.status,
    // Each environment's lock is its own: losing one stands that environment by (environment-claim.ts).
    lockLost: new AbortController().signal,
    rescan: () => parts.scanAll("manual"),
    sync: () => parts.sync("manual"),
    checkDrift: parts.checkDrift,
    async stop(graceMs = 10_000) {
      if (ctx.stopping) return;
      ctx.stopping = true;
      await parts.stopParts(graceMs);
      await ctx.http?.close();
      await ctx.source.close();
      ctx.log.info({}, "stopped; status saved");
    },
  };
}
