import { applyEnvironments } from "./demo-apply.js";
import type { Narrator } from "./demo-narrator.js";
import { promoteToProd, skipSoak } from "./demo-promote.js";

// Steps 3 to 7 of the demo: each environment applied, staging's versions promoted to prod, prod
// applied again.

/** What the demo says of each environment's first apply (steps 3 to 5, in promotion order). */
const FIRST_APPLY: Record<string, string> = {
  onprem: "the self-hosted agents, on the other control plane",
  staging: "create, wait for DEPLOYED, run the checks",
  prod: "the versions prod's overrides pin today",
};

/**
 * Steps 3 to 7: apply onprem, staging and prod in promotion order (as `plumb apply` runs them: the
 * first that does not converge stops the rest), promote staging's versions, apply prod again.
 */
export async function applyAndPromote(
  { c, say, step }: Narrator,
  dir: string,
  commandIo: Parameters<typeof applyEnvironments>[2],
): Promise<boolean> {
  say(c.dim("\n  Each step is `plumb apply --env NAME --yes`: the plan first, then the requests, each new"));
  say(c.dim("  revision followed to DEPLOYED, then the agent's checks (verify) against its agent server."));
  say(c.dim("  Environments go in promotion order, and one that does not converge stops the others."));
  let number = 3;
  const first = await applyEnvironments(dir, Object.keys(FIRST_APPLY), commandIo, (name) =>
    step(`${number++}. apply --env ${name}: ${FIRST_APPLY[name] ?? ""}`),
  );
  if (first !== 0) {
    say(c.red("apply did not converge; see above"));
    return false;
  }

  step("6. promote --to prod: staging's checked versions into prod's overrides, once the gates hold");
  say("  environments/prod.yaml: promotion from staging when its revision is DEPLOYED (no drift,");
  say("  nothing pending), has soaked 30 minutes, and its checks passed (ratio 0.9, p95 2 s).");
  say();
  const blocked = await promoteToProd(dir, [], commandIo);
  say();
  say(
    blocked === 0
      ? c.yellow("  (the gates held already)")
      : "  Refused, as it should be: staging's revisions are seconds old. The demo's copy sets soak: 0s",
  );
  if (blocked !== 0) {
    say("  in environments/prod.yaml so that the other gates decide now:");
    await skipSoak(dir);
  }
  say();
  if ((await promoteToProd(dir, ["--write"], commandIo)) !== 0) {
    say(c.red("promote --to prod did not pass its gates; see above"));
    return false;
  }
  step("7. apply --env prod: the promoted versions, then prod's own checks");
  if ((await applyEnvironments(dir, ["prod"], commandIo)) !== 0) {
    say(c.red("apply --env prod did not converge; see above"));
    return false;
  }
  return true;
}
