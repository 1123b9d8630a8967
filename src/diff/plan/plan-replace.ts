import { type BuildPlanInput, buildPlan } from "./build-plan.js";
import type { Plan, PlannedChange } from "./plan-types.js";

// Replace: an immutable-field change stays refused unless the user allows replacing that
// deployment (--replace NAME, or the manifest annotation plumb/replace: allowed). Then the change
// becomes the create plumb would plan if the deployment did not exist, marked `replaces` with the
// old id and the immutable fields: apply deletes the old one, waits until it is gone, then creates
// it under the same name. Pure.

const REPLACE_WARNING =
  "replace: the live deployment is deleted, then created again under the same name: downtime, and a new id";

/**
 * The immutable fields a change is refused for (only a refused change of a live deployment holds
 * any: buildPlan): a replace would resolve them.
 */
const immutableFields = (change: PlannedChange): string[] =>
  // Stryker disable next-line ArrayDeclaration: equivalent, no item of a stand-in list is an immutable field
  (change.fields ?? []).filter((f) => f.class === "immutable").map((f) => f.field);

export function planReplacements(
  plan: Plan,
  input: BuildPlanInput,
  allowed: (name: string) => boolean,
): Plan {
  let replaced = 0;
  const changes = plan.changes.map((change, i) => {
    const fields = immutableFields(change);
    if (fields.length === 0 || !allowed(change.name)) return change;
    const object = input.desired[i];
    if (!object) return change;
    // Planned as if nothing were live (buildPlan looks up only the object's own name). An object
    // that cannot be planned (errors: not_planned) plans no create, and stays refused.
    // Stryker disable next-line ArrayDeclaration: equivalent, a list without this name is as good as none
    const nothingLive = { ...input.live, deployments: [] };
    const created = buildPlan({ ...input, desired: [object], live: nothingLive }).changes[0]!;
    if (created.action !== "create") return change;
    replaced += 1;
    return {
      ...created,
      replaces: { id: change.id!, fields },
      warnings: [...created.warnings, { field: fields.join(", "), message: REPLACE_WARNING }],
    } satisfies PlannedChange;
  });
  if (replaced === 0) return plan;
  const summary = {
    ...plan.summary,
    refused: plan.summary.refused - replaced,
    create: plan.summary.create + replaced,
  };
  return { ...plan, changes, summary: { ...summary, replace: replaced } };
}
