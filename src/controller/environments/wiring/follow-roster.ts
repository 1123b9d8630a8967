import type { LoadResult } from "../../../manifest/load.js";
import { followEnvironments } from "../environment-roster.js";
import { refuseCollisions } from "../environment-set.js";
import { claimOf } from "./environment-store.js";
import { type Context, HAND_OVER_GRACE_MS } from "./controller-context.js";

/**
 * The environments git defines now: start the added, stop the removed, restart the reconnected
 * (returned: their stores drain and do not take this change; the stores started next do).
 */
export function follow(ctx: Context, tree: LoadResult): string[] {
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
