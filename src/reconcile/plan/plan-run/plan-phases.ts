// The plan's phases as User Timing marks, for the plan benchmark.

/**
 * Where a plan's time goes, on Node's performance timeline (User Timing marks `plumb:plan:PHASE`):
 * start, loaded (files read, parsed, validated, secrets resolved), live-read and
 * fingerprints-checked (in parallel), built (records settled, the diff), formatted (cli/plan.ts).
 * `npm run bench -- plan` reports them; each run replaces the previous run's marks.
 */
export function markPlanPhase(
  phase: "start" | "loaded" | "live-read" | "fingerprints-checked" | "built" | "formatted",
): void {
  if (phase === "start") for (const name of PLAN_MARKS) performance.clearMarks(name);
  performance.mark(`plumb:plan:${phase}`);
}
const PLAN_MARKS = ["start", "loaded", "live-read", "fingerprints-checked", "built", "formatted"].map(
  (phase) => `plumb:plan:${phase}`,
);
