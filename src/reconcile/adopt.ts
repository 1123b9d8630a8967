import type { DesiredObject, LiveState } from "../diff/plan/build-plan.js";
import type { PlannedChange } from "../diff/plan/plan-types.js";
import { fingerprintSecretsAsync } from "../diff/secrets/secret-fingerprint.js";
import type { Deployment } from "../schema/deployment.js";
import { appliedSpecOf, manifestDigest, secretOriginsOf } from "../apply/status-record.js";
import { type ObjectStatus, statusKey } from "../status/status-types.js";
import { decideHealth } from "../status/health.js";

// `plumb adopt`: records the state of deployments that already exist live, as if plumb had applied
// the manifests' current secret values, without sending anything. It is the operator's assertion
// that live secrets equal the manifests' (the control plane cannot confirm it: it never returns
// values). Afterwards plan shows no secret change for them.

export type AdoptDecision =
  | { name: string; adopt: true; desired: DesiredObject; live: Deployment; change: PlannedChange }
  | { name: string; adopt: false; reason: string };

/** Which planned objects can be adopted: Deployments that exist live and can be planned. */
export function decideAdoption(
  desired: readonly DesiredObject[],
  changes: readonly PlannedChange[],
  live: LiveState,
): AdoptDecision[] {
  const byName = new Map(live.deployments.map((d) => [d.name, d]));
  return desired.map((object, i) => {
    const { kind, metadata } = object.loaded.manifest;
    const name = metadata.name;
    const change = changes[i]!;
    if (kind !== "Deployment")
      return { name, adopt: false, reason: `${kind} has no secrets: nothing to adopt` };
    const deployment = byName.get(name);
    if (!deployment) return { name, adopt: false, reason: "does not exist live: plumb apply creates it" };
    if (object.errors?.length)
      return { name, adopt: false, reason: object.errors.map((e) => e.message).join("; ") };
    if (change.action === "refused")
      return { name, adopt: false, reason: "its change is refused (immutable field)" };
    return { name, adopt: true, desired: object, live: deployment, change };
  });
}

/** The record of one adopted deployment (fingerprints of its current values, as apply writes them). */
export async function buildAdoptedRecord(
  decision: Extract<AdoptDecision, { adopt: true }>,
  previous: ObjectStatus | undefined,
  gitCommit: string | null,
  now: number,
): Promise<ObjectStatus> {
  const { desired, live, change } = decision;
  const secrets = desired.secrets ?? [];
  // Recorded as apply records them (an HMAC for a literal, a source's shared salt otherwise).
  const origins = secretOriginsOf(desired.loaded);
  const fingerprints = secrets.length > 0 ? await fingerprintSecretsAsync(secrets, undefined, origins) : null;
  const deployed = live.latest_revision_id !== null && live.latest_revision_id === live.active_revision_id;
  // Only the secret values were unknown: if nothing else differs, live matches git once they are
  // known. Secret names are known: a live secret the manifest lacks (or the reverse) is a real
  // difference, which a recorded base (applied_spec) made plan call drift, as if plumb had applied
  // the manifest's list and someone had added the secret since.
  const otherFields = [...change.revision_fields, ...change.in_place_fields].filter(
    (f) => f !== "secrets" || !sameNames(live.secrets, secrets),
  );
  const at = new Date(now).toISOString();
  return {
    kind: "Deployment",
    name: live.name,
    id: live.id,
    latest_revision_id: live.latest_revision_id,
    active_revision_id: live.active_revision_id,
    revision_status: deployed ? "DEPLOYED" : (previous?.revision_status ?? null),
    sync: otherFields.length === 0 ? "Synced" : "OutOfSync",
    health: decideHealth({ seen: "adopted", deployment: live }),
    git_commit: gitCommit,
    // The digest says "plumb applied this manifest" (the three-way base, lastAppliedOf): only when
    // live matches it. Recorded for a deployment that differs, plan called each difference drift
    // ("changed outside plumb since its last apply") though plumb never applied the manifest.
    manifest_digest:
      otherFields.length === 0
        ? manifestDigest(desired.loaded.manifest)
        : (previous?.manifest_digest ?? null),
    secret_fingerprints: fingerprints,
    verify_thread_id: previous?.verify_thread_id ?? null,
    applied_at: at,
    updated_at: at,
    last_error: null,
    ...(previous?.source_upload ? { source_upload: previous.source_upload } : {}),
    manifest_file: desired.loaded.file,
    // The three-way base (docs/status.md "Three-way"): the manifest, when live matches it.
    ...(otherFields.length === 0
      ? { applied_spec: appliedSpecOf(desired.loaded) ?? null }
      : previous?.applied_spec
        ? { applied_spec: previous.applied_spec }
        : {}),
  };
}

const sameNames = (a: ReadonlyArray<{ name: string }>, b: ReadonlyArray<{ name: string }>): boolean =>
  a
    .map((s) => s.name)
    .sort()
    .join("\0") ===
  b
    .map((s) => s.name)
    .sort()
    .join("\0");

export const adoptKey = (name: string) => statusKey("Deployment", name);
