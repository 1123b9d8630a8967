import { join } from "node:path";
import { PlumbError } from "../../../errors.js";
import { lockTargetOf } from "../../../lock/index.js";
import type { StatusLocation } from "../../../git/status/status-source.js";
import { nearbyScanOf } from "../../leadership.js";
import { startStore } from "../../store.js";
import { type EnvironmentClaim, startClaim } from "../environment-claim.js";
import { promotionOf } from "../environment-promotion.js";
import { type Context, HAND_OVER_GRACE_MS } from "./controller-context.js";

/** One environment's claim: its lock, and its store started on its current Environment document. */
export function claimOf(ctx: Context, name: string): EnvironmentClaim {
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
    // the stores nearby in ENV/, and with --status-dir its default store as a mark (as `apply --env ENV`)
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
