import type { DesiredObject, LiveState } from "../../../diff/plan/build-plan.js";
import { redactPlan } from "../../../diff/secrets/redact.js";
import type { Plan } from "../../../diff/plan/plan-types.js";
import { PlumbError } from "../../../errors.js";
import { canonicalJson } from "../../../apply/status-record.js";
import { inputsOf, organizationDigest, type SavedPlan } from "./saved-inputs.js";

// A saved plan's staleness (apply --plan): what moved since the plan, each object's manifest, live
// version, secrets and planned request compared with what the saved plan recorded.

const key = (o: { kind: string; name: string }) => `${o.kind}/${o.name}`;
/** Each change's action and request as canonical JSON, by kind/name. */
const requestsOf = (plan: Plan) =>
  new Map(plan.changes.map((c) => [key(c), canonicalJson({ action: c.action, request: c.request })]));

/** Each object whose manifest, live version or secrets moved since the plan, with what moved; [] when none. */
export async function findStale(
  saved: SavedPlan,
  fresh: { plan: Plan; desired: readonly DesiredObject[]; live: LiveState },
): Promise<string[]> {
  const stale: string[] = [];
  const before = new Map(saved.saved.objects.map((o) => [key(o), o]));
  const requestsNow = requestsOf(redactPlan(fresh.plan));
  const requestsThen = requestsOf(saved);
  for (const desired of fresh.desired) {
    const k = `${desired.loaded.manifest.kind}/${desired.loaded.manifest.metadata.name}`;
    const old = before.get(k);
    before.delete(k);
    if (!old) {
      stale.push(`${k}: manifest added since the plan`);
      continue;
    }
    const now = await inputsOf(desired, fresh.live, old.secrets?.salt);
    const moved: string[] = [];
    if (now.manifest_digest !== old.manifest_digest) moved.push("manifest changed");
    if (canonicalJson(now.live) !== canonicalJson(old.live))
      moved.push(
        old.live === null
          ? "created live since the plan"
          : now.live === null
            ? "deleted live since the plan"
            : `live changed (updated_at ${old.live.updated_at} → ${now.live.updated_at})`,
      );
    const names = new Set([
      ...Object.keys(old.secrets?.values ?? {}),
      ...Object.keys(now.secrets?.values ?? {}),
    ]);
    for (const name of [...names].sort())
      if (old.secrets?.values[name] !== now.secrets?.values[name]) moved.push(`secret ${name} changed`);
    if (now.source_digest !== old.source_digest) moved.push("source_path content changed");
    if (moved.length === 0 && requestsNow.get(k) !== requestsThen.get(k))
      moved.push("planned request differs");
    if (moved.length > 0) stale.push(`${k}: ${moved.join(", ")}`);
  }
  for (const k of before.keys()) stale.push(`${k}: manifest removed since the plan`);
  if (canonicalJson(fresh.plan.prune ?? []) !== canonicalJson(saved.prune ?? []))
    stale.push("managed deployments removed from git (prune) differ from the plan");
  if (fresh.live.organization && organizationDigest(fresh.live) !== saved.saved.organization)
    stale.push(
      "OrganizationAccess: live organization settings changed, or the platform API is another organization's",
    );
  return stale;
}

/** A saved plan whose inputs moved is refused whole (plan-stale), before anything is sent. */
export async function refuseStalePlan(
  file: string,
  saved: SavedPlan,
  fresh: Parameters<typeof findStale>[1],
): Promise<void> {
  const stale = await findStale(saved, fresh);
  if (stale.length === 0) return;
  throw new PlumbError(
    "plan-stale",
    `the saved plan ${file} is stale; nothing was sent:\n${stale.map((s) => `  - ${s}`).join("\n")}\nRun plumb plan --out again and review the new plan.`,
    { exitCode: 1 },
  );
}
