import type { SecretFingerprints } from "../diff/secrets/secret-fingerprint.js";
import type { Deployment } from "../schema/deployment.js";
import type { ObjectStatus, PendingIntent, StatusStore } from "./status-types.js";

// The write-ahead intent of a status record (ObjectStatus.pending), pure. apply writes it durably
// before sending a request and clears it once the outcome is recorded; a record that still holds
// one was left by a crash (kill -9, power loss) between the send and the next write. Live decides
// whether the request landed, because the control plane never returns secret values:
// - a create landed when a deployment of that name exists (the record had no id yet);
// - a PATCH landed when live's latest_revision_id or updated_at moved past what the intent saw.
// A landed intent's fingerprints, digest and commit become the record's, so the re-run neither
// re-sends the secrets (an extra revision) nor forgets them; an intent that did not land is dropped.
// An internal_source upload's too: its source digest with the tarball path live holds (the path is
// issued after the intent is written), so the re-run neither uploads nor PATCHes it again.
// Should someone else also change the deployment after a crash, "moved" still reads as landed:
// the record then claims our values, as it would had the process lived (see docs/apply.md).

export type IntentInput = {
  fingerprints: SecretFingerprints | undefined;
  manifestDigest: string | null | undefined;
  gitCommit: string | null;
  live: Deployment | null;
  now: number;
  /** internal_source: the digest of the source the request uploads (PlannedUpload.digest). */
  sourceDigest?: string | undefined;
};

export const buildIntent = (input: IntentInput): PendingIntent => ({
  secret_fingerprints: input.fingerprints ?? null,
  manifest_digest: input.manifestDigest ?? null,
  git_commit: input.gitCommit,
  base_revision_id: input.live?.latest_revision_id ?? null,
  base_updated_at: input.live?.updated_at ?? null,
  started_at: new Date(input.now).toISOString(),
  ...(input.sourceDigest ? { source_digest: input.sourceDigest } : {}),
});

/** True when live shows that the request of `record.pending` reached the server. */
export function intentLanded(record: ObjectStatus, live: Deployment | null | undefined): boolean {
  const intent = record.pending;
  if (!intent || record.kind !== "Deployment" || !live) return false;
  // A create saw nothing live: any deployment of that name now is the one it made.
  if (intent.base_updated_at === null) return true;
  if (record.id !== live.id) return false;
  return live.latest_revision_id !== intent.base_revision_id || live.updated_at !== intent.base_updated_at;
}

/**
 * The record as it stands once its intent is settled against live: promoted when it landed, dropped
 * otherwise. `live` undefined means "not looked at": the record is returned as it is.
 */
export function resolvePending(record: ObjectStatus, live: Deployment | null | undefined): ObjectStatus {
  if (!record.pending || live === undefined) return record;
  const { pending: intent, ...rest } = record;
  if (!intentLanded(record, live)) return rest;
  const uploaded = landedUpload(rest, intent, live);
  return {
    ...rest,
    id: live?.id ?? rest.id,
    git_commit: intent.git_commit,
    manifest_digest: intent.manifest_digest,
    secret_fingerprints: intent.secret_fingerprints ?? rest.secret_fingerprints,
    applied_at: intent.started_at,
    ...(uploaded ? { source_upload: uploaded } : {}),
  };
}

/**
 * The upload a landed intent made: its digest and the tarball path live holds, when that path is
 * not the one recorded before (a create, or the upload-url answered, killed before the PATCH: the
 * source was not set, and the re-run uploads it).
 */
function landedUpload(
  record: ObjectStatus,
  intent: PendingIntent,
  live: Deployment | null,
): ObjectStatus["source_upload"] {
  if (!intent.source_digest || !live) return undefined;
  const path = live.source_revision_config.source_tarball_path;
  if (!path || path === record.source_upload?.object_path) return undefined;
  return { digest: intent.source_digest, object_path: path };
}

/**
 * The records of the objects just planned (`planned`: status keys), settled against the live
 * deployments read for that plan; other records are left as they are (live was not looked at).
 */
export function resolveStorePending(
  store: StatusStore,
  deployments: readonly Deployment[],
  planned: ReadonlySet<string>,
): StatusStore {
  if (![...store.objects.values()].some((r) => r.pending)) return store;
  const byName = new Map(deployments.map((d) => [d.name, d]));
  const objects = new Map<string, ObjectStatus>();
  for (const [key, record] of store.objects) {
    const live = record.kind === "Deployment" ? (byName.get(record.name) ?? null) : null;
    objects.set(key, planned.has(key) ? resolvePending(record, live) : record);
  }
  return { objects, problems: store.problems };
}
