import { PlumbError } from "../../errors.js";
import { refuseStalePlan, savedPlanFlags } from "../../reconcile/plan/saved-plan.js";
import { readSavedPlanFor, targetOf } from "../../reconcile/plan/saved-plan-environments.js";
import { openSession, planSession, type Session, type SessionIo } from "../../reconcile/session.js";
import { forEachEnvironment } from "../environments.js";
import type { ConnectionFlags } from "../options.js";

// apply --plan FILE of several environments (docs/environments.md, "Saved plans"): each part is
// checked again at its turn, under its environment's state lock, but a part that is already stale
// when the apply starts must not leave the environments before it applied and the rest not. So
// every selected part is planned afresh and compared with the file first, before any is applied:
// one stale part refuses the whole apply (plan-stale), nothing sent to any environment. It costs
// one more read of each environment's control plane.

type PartFlags = ConnectionFlags & {
  plan?: string;
  env?: string[];
  environment?: string;
  target: string[];
  prune?: boolean;
  replace?: string[];
  output?: string;
};

/**
 * What apply plans in one session (one environment, or none): its saved part when --plan is given
 * (made against the control plane this session reaches), and the plan with that part's targets,
 * --prune and --replace. The apply itself and the check of every part before any is applied plan
 * the same way.
 */
export async function planApplyRun(session: Session, flags: PartFlags, io: SessionIo) {
  const target = () => targetOf(session.connect().api);
  const saved =
    flags.plan === undefined ? undefined : await readSavedPlanFor(flags.plan, flags.environment, target);
  const given = { targets: flags.target, prune: flags.prune === true, replace: flags.replace ?? [] };
  const run = saved ? savedPlanFlags(saved, given) : given;
  const options = { requireManifests: true, prune: run.prune, replace: run.replace };
  return { saved, result: await planSession(session, io, run.targets, undefined, options) };
}

/** Refuses the whole apply when any selected part of a saved plan of environments is stale. */
export async function refuseStaleParts(path: string, flags: PartFlags, io: SessionIo): Promise<void> {
  if (flags.plan === undefined || (flags.env?.length ?? 0) < 2) return; // one part: checked at its turn
  const quiet = { write: () => true };
  await forEachEnvironment(path, { ...flags, output: "text" }, { ...io, stdout: quiet }, async (f, envIo) => {
    const partIo = { ...io, ...envIo, stdout: quiet };
    const { saved, result } = await planApplyRun(await openSession(path, f, partIo), f, partIo);
    if (!result.ok || !saved) return 1; // invalid manifests: the apply itself reports them, nothing sent
    try {
      await refuseStalePlan(flags.plan!, saved, result);
    } catch (error) {
      if (!(error instanceof PlumbError) || error.code !== "plan-stale") throw error;
      throw new PlumbError(
        "plan-stale",
        `environment ${f.environment}: ${error.message.replace("nothing was sent", "nothing was sent to any environment")}`,
        { exitCode: 1 },
      );
    }
    return 0;
  });
}
