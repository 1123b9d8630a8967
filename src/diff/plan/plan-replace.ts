import { type BuildPlanInput, buildPlan } from "./build-plan.js";
import type { Plan, PlannedChange } from "./plan-types.js";

// Replace: an immutable-field change stays refused unless the user allows replacing that
// deployment (--replace NAME, or the manifest annotation plumb/replace: allowed). Then the change
// becomes the create plumb would plan if the deployment did not exist, marked `replaces` with the
// old id and the immutable fields: apply deletes the old one, waits until it is gone, then creates
// it under the same name. Pure.

const REPLACE_WARNING =
  "replace: the live deployment is deleted, then created again under the same name: downtime, and a new id";

/** True when a refused change is refused only for immutable fields (a replace would resolve it). */
const onlyImmutable = (change: PlannedChange) =>
  change.action === "refused" &&
  !change.not_planned &&
  change.kind === "Deployment" &&
  change.id !== null &&
  (change.fields ?? []).some((f) => f.class === "immutable");

export function planReplacements(
  plan: Plan,
  input: BuildPlanInput,
  allowed: (name: string) => boolean,
): Plan {
  let replaced = 0;
  const changes = plan.changes.map((change, i) => {
    if (!onlyImmutable(change) || !allowed(change.name)) return change;
    const object = input.desired[i];
    if (!object) return change;
    const without = input.live.deployments.filter((d) => d.name !== change.name);
    const created = buildPlan({ ...input, desired: [object], live: { ...input.live, deployments: without } })
      .changes[0];
    if (!created || created.action !== "create") return change;
    replaced += 1;
    const fields = (change.fields ?? []).filter((f) => f.class === "immutable").map((f) => f.field);
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
