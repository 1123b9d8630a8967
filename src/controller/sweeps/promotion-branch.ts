import { UsageError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { type AutoPromotionDeps, openPromotionBranch } from "../../promote/auto-promotion.js";
import { errorMessage } from "../error-message.js";
import type { ControllerOptions } from "../controller-types.js";
import type { Notifier } from "../notify/notifier.js";

// controller --promote-branch-prefix P, for an environment whose spec.promotion.auto is true:
// after each drift check of that environment, the promotion runs (src/promote/auto-promotion.ts);
// when every gate holds it is opened as branch P + ENV of the git source, and `promotion-ready`
// is notified once per change opened. A blocked or failed promotion is logged, never fatal.

export function createPromotionBranchSweep(
  deps: AutoPromotionDeps & { notifier: Notifier | undefined; log: Logger },
): () => Promise<void> {
  return async () => {
    if (deps.enabled && !deps.enabled()) return; // promotion.auto was turned off in git
    try {
      const opened = await openPromotionBranch(deps);
      if (!opened) return;
      const promoted = opened.report.items.filter((i) => i.outcome === "promoted");
      deps.log.info(
        { branch: opened.branch, commit: opened.commit, deployments: promoted.map((i) => i.name) },
        "promotion opened on a branch",
      );
      deps.notifier?.notify({
        event: "promotion-ready",
        object: null,
        id: null,
        revision: opened.commit,
        fields: promoted.flatMap((i) => i.fields.map((f) => `${i.name} ${f.field}`)),
        message: `${opened.report.from} to ${opened.report.to}: ${promoted.map((i) => i.name).join(", ")} on branch ${opened.branch}; review and merge it`,
      });
    } catch (error) {
      deps.log.error({ branch: deps.branch, err: errorMessage(error) }, "promotion branch not opened");
    }
  };
}

/** --promote-branch-prefix pushes branches of the git source: it needs one (--repo). */
export function checkPromoteBranchOptions(
  options: Pick<ControllerOptions, "promoteBranchPrefix" | "source">,
): void {
  if (options.promoteBranchPrefix !== undefined && options.source.kind !== "git")
    throw new UsageError(
      "--promote-branch-prefix needs a git source (--repo): it opens each promotion as a branch of it",
    );
}
