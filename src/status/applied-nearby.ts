import { type ObjectStatus, type StatusStore, blankObjectStatus, statusKey } from "./status-types.js";

// Pure: what the last apply sent to each object, as the stores above and below a PATH recorded it
// (the default stores of its ancestor directories up to the git root, and of the directories of a
// directory PATH's tree; docs/status.md "Stores above and below"). A PATH inside a tree has its own
// store; an apply of the whole tree recorded the same deployments in the tree's store, and an apply
// of a sub-directory in the sub-directory's. Only "what was applied" is taken from there: the secrets' salted fingerprints
// (each carries its salt, so a record verifies the same anywhere), the source upload, the applied
// spec, digest, commit and time; for an object this store has no record of, also what was last
// seen of it (health, the verify thread, the checks), so an unchanged object is not verified again as
// if never seen. Never a manifest_file (relative to another directory: prune would read it as a
// removed file) nor a pending intent (settled by the store that wrote it); the id says which
// deployment it was applied to, and an applied part of another deployment is never taken.

/** The part of a record that says what the last apply sent. */
type AppliedPart = Pick<
  ObjectStatus,
  "secret_fingerprints" | "source_upload" | "applied_spec" | "manifest_digest" | "git_commit" | "applied_at"
>;

const time = (iso: string | null | undefined) => (iso ? Date.parse(iso) || 0 : 0);

/**
 * Whether two records can speak of the same deployment: not when both name one and the ids differ
 * (applied to another control plane, or a deployment deleted and created again under the name).
 */
const sameDeployment = (a: Pick<ObjectStatus, "id">, b: Pick<ObjectStatus, "id">) =>
  !a.id || !b.id || a.id === b.id;

const appliedPartOf = (record: ObjectStatus): AppliedPart => ({
  secret_fingerprints: record.secret_fingerprints,
  ...(record.source_upload ? { source_upload: record.source_upload } : {}),
  ...(record.applied_spec ? { applied_spec: record.applied_spec } : {}),
  manifest_digest: record.manifest_digest,
  git_commit: record.git_commit,
  applied_at: record.applied_at ?? null,
});

/** A record with `applied` as its applied part: the rest (manifest_file, ids, health, ...) is kept. */
function withApplied(record: ObjectStatus, applied: AppliedPart): ObjectStatus {
  const { source_upload: _upload, applied_spec: _spec, ...rest } = record;
  return { ...rest, ...applied };
}

/**
 * The applied part of each object among the stores nearby (nearest first), the later apply winning;
 * records that say nothing was applied (no applied_at) are left out.
 */
export function latestAppliedNearby(stores: readonly StatusStore[]): Map<string, ObjectStatus> {
  const latest = new Map<string, ObjectStatus>();
  for (const store of stores)
    for (const [key, record] of store.objects) {
      if (time(record.applied_at) === 0) continue;
      const current = latest.get(key);
      if (!current || time(record.applied_at) > time(current.applied_at)) latest.set(key, record);
    }
  const parts = new Map<string, ObjectStatus>();
  for (const [key, record] of latest) {
    const seen = {
      ...blankObjectStatus(record.kind, record.name),
      // Which deployment it was applied to: plan trusts it only for that one (plan-run.ts).
      id: record.id,
      health: record.health,
      verify_thread_id: record.verify_thread_id ?? null,
      ...(record.checks ? { checks: record.checks } : {}),
    };
    parts.set(key, withApplied(seen, appliedPartOf(record)));
  }
  return parts;
}

/**
 * The store as plan and apply read what was last applied: the local store, each object's applied
 * part replaced by the one nearby when that apply was later. A record with a pending intent is kept
 * as it is (its own store settles it); an object only nearby gets a record of its applied part and
 * of what was last seen of it (its id, health, verify thread, checks; no manifest_file or pending).
 * An applied part recorded for another deployment id than the local record's is not taken. Never
 * written back whole, never given to prune.
 */
export function withAppliedNearby(
  local: StatusStore,
  nearby: ReadonlyMap<string, ObjectStatus>,
): StatusStore {
  if (nearby.size === 0) return local;
  const objects = new Map(local.objects);
  for (const [key, part] of nearby) {
    const own = local.objects.get(key);
    if (!own)
      objects.set(key, part); // what was seen of it nearby comes along (latestAppliedNearby)
    else if (!own.pending && sameDeployment(own, part) && time(part.applied_at) > time(own.applied_at))
      objects.set(key, withApplied(own, appliedPartOf(part)));
  }
  return { objects, problems: local.problems };
}

/** Health a verify's checks decide on a DEPLOYED revision; the others are the wait's or live's own. */
const judgedByChecks = (health: ObjectStatus["health"]) => health === "Healthy" || health === "Degraded";

/**
 * Records refreshed from PATH's own store, shown with what the stores nearby saw later (`plumb
 * status TREE/sub` after an apply of TREE): the later applied part, the later checks, and the
 * health those checks gave while their revision is still the active one (a failed verify left the
 * tree's record Degraded; the sub-directory's own record, never verified, said Healthy). For the
 * display only: what a store records stays its own (prune and the writes read it alone).
 */
export function withSeenNearby(
  records: readonly ObjectStatus[],
  nearby: ReadonlyMap<string, ObjectStatus>,
): ObjectStatus[] {
  if (nearby.size === 0) return [...records];
  return records.map((record) => {
    const seen = nearby.get(statusKey(record.kind, record.name));
    if (!seen || record.pending || !sameDeployment(record, seen)) return record;
    let shown =
      time(seen.applied_at) > time(record.applied_at) ? withApplied(record, appliedPartOf(seen)) : record;
    if (seen.checks && time(seen.checks.at) > time(record.checks?.at)) {
      const onActive = seen.checks.revision_id === record.active_revision_id;
      const health =
        onActive && judgedByChecks(record.health) && judgedByChecks(seen.health) ? seen.health : shown.health;
      shown = { ...shown, checks: seen.checks, health };
    }
    return shown;
  });
}
