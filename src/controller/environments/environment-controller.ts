import { join } from "node:path";
import type { ApiOptions } from "../../api/config.js";
import type { Clock } from "../../clock.js";
import { PlumbError, UsageError } from "../../errors.js";
import { DEFAULT_LEASE_MS } from "../../lock/lock-types.js";
import { lockTargetOf } from "../../lock/index.js";
import { maxManifestBytesFrom } from "../../manifest/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import { resolveStatusDir, type StatusLocation } from "../../git/status-source.js";
import type { Controller, ControllerStartOptions } from "../controller-types.js";
import type { ControllerHttp } from "../http/http-server.js";
import { systemTimers } from "../queue/work-queue.js";
import { createManifestLoader } from "../snapshot/manifest-loader.js";
import type { ManifestSource } from "../source/manifest-source.js";
import { createSync, startTriggers } from "../source/triggers.js";
import { startStore } from "../store.js";
import { type EnvironmentClaim, startClaim } from "./environment-claim.js";
import { environmentHandlers } from "./environment-http.js";
import { createEnvironmentLoad } from "./environment-load.js";
import { environmentsStatus } from "./environment-status.js";
import { createRebalance } from "./rebalance.js";
import type { AutoPromotionDeps } from "../../promote/auto-promotion.js";
import { defaultReplicaId, startReplicas } from "./replicas.js";

// `plumb controller` on a tree that defines environments (docs/environments.md "The controller"):
// one store per environment (store.ts: its own API client and rate budget from its Environment, its
// state lock, status store P/.plumb/status/ENV/ — ENV/ on the status branch —, work queue and drift
// sweep), each claimed independently (environment-claim.ts), spread over the live replicas
// (rebalance.ts, replicas.ts). The source, its triggers, one read of the tree per trigger and the
// HTTP side are shared.

const HAND_OVER_GRACE_MS = 10_000;

export async function startEnvironmentController(
  options: ControllerStartOptions,
  shared: {
    source: ManifestSource;
    http: ControllerHttp | undefined;
    environments: readonly LoadedEnvironment[];
    clock: Clock;
  },
): Promise<Controller> {
  const { source, http } = shared;
  const log = options.logger;
  const timers = options.timers ?? systemTimers;
  if (options.driftBranch)
    throw new UsageError("--drift-branch with environments is planned (docs/environments.md); drop it");
  const environmentApi = options.environmentApi;
  if (!environmentApi)
    throw new PlumbError(
      "api-config",
      "the manifests define environments, and no reader of their API settings was given",
    );
  const leaseMs = options.lockLeaseMs ?? DEFAULT_LEASE_MS;
  const base = resolveStatusDir({ root: source.manifestRoot, statusDir: options.statusDir });
  const loader = createManifestLoader(maxManifestBytesFrom(options.env), timers);
  const tree = createEnvironmentLoad((root) => loader.loadTree(root));
  const replicas = await startReplicas({
    dir: join(base, ".replicas"),
    id: options.replicaId ?? defaultReplicaId(),
    leaseMs,
    log,
  });
  let stopping = false;
  const claims: EnvironmentClaim[] = [];
  const leaders = () => claims.filter((c) => c.role() === "leader" && c.store());
  const rebalance = createRebalance(shared.environments.length, () => claims, replicas.live);
  // Started while a trigger came: rescanned once leading, so its first snapshot is not older.
  const rescanOnceStarted = new Set<string>();
  const scanAll = async (trigger: string) => {
    if (stopping) return;
    tree.next();
    for (const c of claims) if (c.role() === "starting") rescanOnceStarted.add(c.name);
    await Promise.all(leaders().map((c) => c.store()!.scan(trigger)));
  };
  const scanned = (trigger: string, result: "ok" | "invalid" | "error") =>
    leaders().forEach((c) => c.store()!.scanned(trigger, result));
  const sync = createSync({ source, scan: scanAll, metrics: { scanned }, log, stopping: () => stopping });
  const checkDrift = async () => void (await Promise.all(leaders().map((c) => c.store()!.checkDrift())));
  const triggers = await startTriggers({
    source,
    intervalMs: options.source.kind === "git" ? options.source.intervalMs : undefined,
    debounceMs: options.debounceMs,
    driftSchedule: options.driftSchedule,
    scan: scanAll,
    sync,
    checkDrift,
    timers,
    log,
  }).catch(async (error: unknown) => {
    await replicas.stop(); // startup failed: this replica is not one of the live ones
    await loader.close();
    throw error;
  });

  // promotion.auto with --promote-branch-prefix: the environment's promotions opened as branches.
  const promotionOf = (environment: LoadedEnvironment): AutoPromotionDeps | undefined => {
    const name = environment.manifest.metadata.name;
    if (options.promoteBranchPrefix === undefined || environment.manifest.spec.promotion?.auto !== true)
      return undefined;
    const byName = (env: string) => shared.environments.find((e) => e.manifest.metadata.name === env);
    return {
      source: { repoRoot: source.repoRoot, manifestRoot: source.manifestRoot, gitEnv: source.gitEnv },
      to: name,
      branch: `${options.promoteBranchPrefix}${name}`,
      apiOf: (env) => {
        const found = byName(env);
        if (!found) throw new PlumbError("promotion-not-configured", `environment ${env} is not defined`);
        return environmentApi(found, source.manifestRoot);
      },
      statusDirOf: (env) => join(base, env),
      env: options.env,
      fetch: options.fetch,
    };
  };

  for (const environment of shared.environments) {
    const name = environment.manifest.metadata.name;
    const envLog = log.child({ environment: name });
    const location: StatusLocation = {
      root: source.manifestRoot,
      statusDir: join(base, name),
      statusBranch: options.statusBranch,
      gitEnv: source.gitEnv,
      environment: name,
    };
    let api: ApiOptions | undefined;
    claims.push(
      startClaim({
        name,
        target: lockTargetOf(location),
        leaseMs: options.lockLeaseMs,
        mayTake: rebalance.mayTake,
        check: () => void (api = environmentApi(environment, source.manifestRoot)),
        start: async (lock) => {
          const store = await startStore(
            { ...options, api: api!, logger: envLog, statusDir: location.statusDir, signal: undefined },
            {
              source,
              http: undefined,
              lock,
              environment: {
                name,
                location,
                load: tree.forEnvironment(name),
                nextDriftCheck: () => triggers.nextDriftCheck(),
                pageUrl: () => http?.url,
                promotion: promotionOf(environment),
              },
            },
          );
          store.registry.setDefaultLabels({ environment: name });
          if (rescanOnceStarted.delete(name)) void store.scan("watch");
          return store;
        },
        changed: () => rebalance.run(),
        retryMs: Math.max(1_000, leaseMs),
        graceMs: HAND_OVER_GRACE_MS,
        log: envLog,
      }),
    );
  }
  rebalance.run();
  const ticker = setInterval(() => rebalance.run(), Math.max(100, leaseMs / 3));
  ticker.unref();
  const status = () => environmentsStatus({ claims, source, replicas, share: rebalance.share });
  http?.use(
    environmentHandlers({
      claims: () => claims,
      environments: shared.environments,
      statusDirOf: (name) => join(base, name),
      status,
      statusToken: options.statusToken,
      webhookSecret: options.webhookSecret,
      sync,
      scanned,
      log,
    }),
  );
  log.info(
    { environments: claims.map((c) => c.name), replica: replicas.self, replicas: replicas.live() },
    "reconciling environments",
  );

  return {
    url: http?.url,
    manifestRoot: source.manifestRoot,
    // Settled: every environment led here has reconciled its first scan, and none is still starting.
    ready: () =>
      leaders().length > 0 &&
      leaders().every((c) => c.store()!.ready()) &&
      !claims.some((c) => c.role() === "starting"),
    status,
    // Each environment's lock is its own: losing one stands that environment by (environment-claim.ts).
    lockLost: new AbortController().signal,
    rescan: () => scanAll("manual"),
    sync: () => sync("manual"),
    checkDrift,
    async stop(graceMs = 10_000) {
      if (stopping) return;
      stopping = true;
      clearInterval(ticker);
      await triggers.stop();
      await Promise.all(claims.map((c) => c.stop(graceMs)));
      await replicas.stop();
      await loader.close();
      await http?.close();
      await source.close();
      log.info({}, "stopped; status saved");
    },
  };
}
