import type { Plan, PlannedChecks } from "../../diff/plan/plan-types.js";
import type { Manifest } from "../../schema/manifest.js";
import type { ObjectStatus } from "../../status/status-types.js";
import { statusKey } from "../../status/status-types.js";
import { checksRecordInvalid } from "../../status/checks/checks-record-problems.js";

// Pure: what a plan says of each Deployment's checks (spec.verify): how many runs apply will make
// after DEPLOYED, the thresholds, and what the status record measured last.

function plannedChecks(manifest: Manifest, record: ObjectStatus | undefined): PlannedChecks | undefined {
  if (manifest.kind !== "Deployment" || !manifest.spec.verify) return undefined;
  const verify = manifest.spec.verify;
  const asked = (verify.cases?.length ?? 0) + (verify.input ? 1 : 0);
  const recorded = record?.checks;
  const invalid = recorded ? checksRecordInvalid(recorded) : null;
  const last = invalid ? undefined : recorded;
  return {
    runs: asked * (verify.repeat ?? 1),
    min_pass_ratio: verify.min_pass_ratio ?? 1,
    max_latency_p95_ms: verify.max_latency_p95_ms ?? null,
    last: last
      ? {
          revision_id: last.revision_id,
          runs: last.runs,
          passed: last.passed,
          pass_ratio: last.pass_ratio,
          p95_ms: last.latency_ms.p95,
        }
      : null,
    ...(invalid ? { last_invalid: invalid } : {}),
  };
}

/** The plan with each Deployment change's checks (the manifests and records by statusKey). */
export function withPlannedChecks(
  plan: Plan,
  manifests: ReadonlyMap<string, Manifest>,
  records: ReadonlyMap<string, ObjectStatus>,
): Plan {
  let any = false;
  const changes = plan.changes.map((change) => {
    const key = statusKey(change.kind, change.name);
    const manifest = manifests.get(key);
    const checks = manifest && plannedChecks(manifest, records.get(key));
    if (!checks) return change;
    any = true;
    return { ...change, checks };
  });
  return any ? { ...plan, changes } : plan;
}
