import { join } from "node:path";
import type { ApiOptions } from "../../api/config.js";
import type { Clock } from "../../clock.js";
import { PlumbError } from "../../errors.js";
import { DEFAULT_LEASE_MS } from "../../lock/lock-types.js";
import { lockTargetOf } from "../../lock/index.js";
import type { Logger } from "../../logger.js";
import type { LoadResult } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import { resolveStatusDir, type StatusLocation } from "../../git/status-source.js";
import type { Controller, ControllerStartOptions } from "../controller-types.js";
import type { ControllerHttp } from "../http/http-server.js";
import { systemTimers } from "../queue/work-queue.js";
import { createManifestLoader } from "../snapshot/manifest-loader.js";
import { treeAtRest } from "../snapshot/read-at-rest.js";
import type { ManifestSource } from "../source/manifest-source.js";
import { createSync, startTriggers } from "../source/triggers.js";
import { nearbyScanOf } from "../leadership.js";
import { startStore } from "../store.js";
import { type EnvironmentClaim, startClaim } from "./environment-claim.js";
import { environmentHandlers } from "./environment-http.js";
import { withEnvironmentHints } from "../../reconcile/environment-hints.js";
import { createEnvironmentLoad, type EnvironmentLoad } from "./environment-load.js";
import { promotionOf } from "./environment-promotion.js";
import { followEnvironments } from "./environment-roster.js";
import { refuseCollisions } from "./environment-set.js";
import { environmentsStatus } from "./environment-status.js";
import { createRebalance, type Rebalance } from "./rebalance.js";
import { defaultReplicaId, startReplicas } from "./replicas.js";

// `plumb controller` on a tree that defines environments (docs/environments.md "The controller"):
// one store per environment (store.ts: its own API client and rate budget from its Environment, its
// state lock, status store P/.plumb/status/ENV/ — ENV/ on the status branch —, work queue and drift
// sweep), each claimed independently (environment-claim.ts), spread over the live replicas
// (rebalance.ts, replicas.ts). The source, its triggers, one read of the tree per trigger and the
// HTTP side are shared. Each trigger's read also says which environments git defines now
// (environment-roster.ts): one added starts, one removed stops, one whose connection changed restarts.

const HAND_OVER_GRACE_MS = 10_000;

/** What the environments of one controller share; `roster` and `claims` follow git. */
type Context = {
  options: ControllerStartOptions;
  source: ManifestSource;
  http: ControllerHttp | undefined;
  log: Logger;
  base: string;
  leaseMs: number;
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions;
  tree: EnvironmentLoad;
  rebalance: Rebalance;
  /** The Environment documents followed (the last valid one of each), by name. */
  roster: Map<string, LoadedEnvironment>;
  /** Environments whose document in git is invalid: the first problem (the last valid one runs). */
  invalid: Map<string, string>;
  /** Environments refused while they collide with another (environment-name-collision): why. */
  refused: Map<string, string>;
  claims: EnvironmentClaim[];
  /** Claims of environments removed from git, still draining. */
  ending: Set<Promise<void>>;
  /** Started while a trigger came: rescanned once leading, so its first snapshot is not older. */
  rescanOnceStarted: Set<string>;
  nextDriftCheck: () => Date | null;
  stopping: boolean;
};

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

const leadersOf = (claims: readonly EnvironmentClaim[]) =>
  claims.filter((c) => c.role() === "leader" && c.store());

/** The shared triggers' work: follow git's environments, then scan (or check) each one led here. */
function createScans(ctx: Context) {
  const { log, source } = ctx;
  const scanAll = async (trigger: string) => {
    if (ctx.stopping) return;
    const generation = ctx.tree.next();
    try {
      // A read that fails is each store's to report (its scan shares the same failed read).
      const tree = await ctx.tree.shared(source.manifestRoot).catch(() => undefined);
      // A store restarting for new settings does not scan this change: its next store does, with them.
      // An older read finishing after a newer one is not followed: it would undo the newer roster.
      const restarting = tree && !ctx.stopping && ctx.tree.follows(generation) ? follow(ctx, tree) : [];
      for (const c of ctx.claims) if (c.role() === "starting") ctx.rescanOnceStarted.add(c.name);
      const scanning = leadersOf(ctx.claims).filter((c) => !restarting.includes(c.name));
      await Promise.all(scanning.map((c) => c.store()!.scan(trigger)));
    } finally {
      ctx.tree.release();
    }
  };
  const scanned = (trigger: string, result: "ok" | "invalid" | "error") =>
    leadersOf(ctx.claims).forEach((c) => c.store()!.scanned(trigger, result));
  const newCommit = async () =>
    void (await Promise.all(leadersOf(ctx.claims).map((c) => c.store()!.checkTracked())));
  const sync = createSync({
    ...{ source, scan: scanAll, metrics: { scanned }, log, newCommit },
    stopping: () => ctx.stopping,
  });
  const checkDrift = async () =>
    void (await Promise.all(leadersOf(ctx.claims).map((c) => c.store()!.checkDrift())));
  return { scanAll, scanned, sync, checkDrift };
}

/**
 * The environments git defines now: start the added, stop the removed, restart the reconnected
 * (returned: their stores drain and do not take this change; the stores started next do).
 */
function follow(ctx: Context, tree: LoadResult): string[] {
  const { log } = ctx;
  const change = followEnvironments(ctx.roster, tree, ctx.options.environments ?? []);
  ctx.roster = change.next;
  for (const [name, problem] of change.invalid)
    if (ctx.invalid.get(name) !== problem)
      log.warn(
        { environment: name, problem },
        "Environment document invalid: running its last valid version",
      );
  ctx.invalid = change.invalid;
  const refused = refuseCollisions(ctx, tree, ctx.source.manifestRoot);
  for (const name of change.removed) {
    const claim = ctx.claims.find((c) => c.name === name);
    if (!claim) continue;
    ctx.claims.splice(ctx.claims.indexOf(claim), 1);
    ctx.rescanOnceStarted.delete(name);
    log.info({ environment: name }, "Environment removed from git: stopping it here (nothing is deleted)");
    const ending: Promise<void> = claim.stop(HAND_OVER_GRACE_MS).finally(() => ctx.ending.delete(ending));
    ctx.ending.add(ending);
  }
  for (const name of change.added) {
    log.info({ environment: name }, "Environment added in git: reconciling it");
    ctx.claims.push(claimOf(ctx, name));
  }
  for (const name of change.restarted) {
    log.info(
      { environment: name },
      "Environment's connection changed in git: restarting its client and store",
    );
    ctx.claims.find((c) => c.name === name)?.restart();
  }
  if (change.removed.length > 0 && ctx.roster.size === 0)
    log.warn({}, "the manifests define no environment any more: restart the controller to reconcile them");
  if (change.added.length + change.removed.length > 0) ctx.rebalance.run();
  return [...change.restarted, ...refused];
}

/** One environment's claim: its lock, and its store started on its current Environment document. */
function claimOf(ctx: Context, name: string): EnvironmentClaim {
  const { options, source } = ctx;
  const log = options.logger.child({ environment: name });
  const location: StatusLocation = {
    root: source.manifestRoot,
    statusDir: join(ctx.base, name),
    statusBranch: options.statusBranch,
    gitEnv: source.gitEnv,
    gitQueue: source.gitQueue,
    environment: name,
    gitStop: source.gitStop,
  };
  const api = () => {
    const environment = ctx.roster.get(name);
    if (!environment) throw new PlumbError("api-config", `environment ${name} is no longer defined in git`);
    const refusal = ctx.refused.get(name);
    if (refusal) throw new PlumbError("environment-name-collision", refusal);
    return ctx.environmentApi(environment, source.manifestRoot);
  };
  const promotion = {
    source,
    base: ctx.base,
    environments: () => ctx.roster,
    environmentApi: ctx.environmentApi,
  };
  return startClaim({
    name,
    target: lockTargetOf(location),
    // --status-dir: that store only; else the stores nearby in ENV/ (as `apply --env ENV` locks them)
    nearby: nearbyScanOf({ root: source.manifestRoot, statusDir: options.statusDir, environment: name }),
    leaseMs: options.lockLeaseMs,
    mayTake: ctx.rebalance.mayTake,
    check: () => void api(),
    start: async (lock) => {
      const store = await startStore(
        { ...options, api: api(), logger: log, statusDir: location.statusDir, signal: undefined },
        {
          source,
          http: undefined,
          lock,
          environment: {
            ...{ name, location, load: ctx.tree.forEnvironment(name) },
            nextDriftCheck: () => ctx.nextDriftCheck(),
            pageUrl: () => ctx.http?.url,
            promotion: promotionOf(options, promotion, name),
          },
        },
      );
      store.registry.setDefaultLabels({ environment: name });
      if (ctx.rescanOnceStarted.delete(name)) void store.scan("watch");
      return store;
    },
    changed: () => ctx.rebalance.run(),
    retryMs: Math.max(1_000, ctx.leaseMs),
    graceMs: HAND_OVER_GRACE_MS,
    log,
  });
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
