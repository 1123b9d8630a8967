import type { Logger } from "../../logger.js";
import type { ControllerOptions } from "../controller-types.js";
import { createDriftBranchWriter, type DriftBranchDeps } from "./drift-branch.js";
import { createDriftSweep, type DriftSweepDeps } from "./drift-sweep.js";

// One scheduled drift check: the sweep of every object, then (--drift-branch) the drifted fields
// written back to a branch of the git source, once the controller is ready.

export function createDriftCheck(
  options: Pick<ControllerOptions, "driftBranch" | "env">,
  deps: {
    sweep: DriftSweepDeps;
    writeBack: Pick<DriftBranchDeps, "source" | "statuses" | "readers" | "environment" | "redactor">;
    /** Not stopping and ready: only then is drift written back. */
    writing: () => boolean;
    /** promotion.auto: the promotion opened on a branch after the check (promotion-branch.ts). */
    promote?: (() => Promise<void>) | undefined;
    log: Logger;
  },
): () => Promise<void> {
  const sweep = createDriftSweep(deps.sweep);
  const writeBack = options.driftBranch
    ? createDriftBranchWriter({
        ...deps.writeBack,
        branch: options.driftBranch,
        env: options.env,
        log: deps.log,
      })
    : undefined;
  return async () => {
    await sweep();
    if (writeBack && deps.writing()) await writeBack();
    if (deps.promote && deps.writing()) await deps.promote();
  };
}
