import { isDeepStrictEqual } from "node:util";
import type { Plan, PlannedChange } from "../diff/plan/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import type { RevisionStatus } from "../schema/revision.js";
import { decideHealth } from "../status/health.js";
import type { ObjectStatus, StatusStore, SyncStatus } from "../status/status-types.js";
import { blankObjectStatus, statusKey } from "../status/status-types.js";

export type RefreshInput = {
  plan: Plan;
  store: StatusStore;
  live: readonly Deployment[];
  /** Status of each deployment's latest revision, where it was read (deployment id → status). */
  latestStatuses: ReadonlyMap<string, RevisionStatus>;
  now: number;
};

export type Refreshed = {
  /** Records to write: every object in git, and recorded objects still live but gone from git. */
  records: ObjectStatus[];
  /** Recorded objects gone from git and from the control plane: their records are removed. */
  removed: ObjectStatus[];
};

/** last_error of a recorded deployment that is no longer on the control plane. */
const missingError = (id: string | null): string =>
  `missing: deployment ${id ?? "(no id)"} is no longer on the control plane (deleted outside plumb); plumb apply creates it again`;

const isMissingError = (text: string | null) => text?.startsWith("missing: ") ?? false;

/**
 * A recorded deployment gone from live: its revisions went with it, so nothing of them is kept;
 * the id stays so drift keeps saying "vanished", not "never created".
 */
function missing(base: ObjectStatus): ObjectStatus {
  return {
    ...base,
    latest_revision_id: null,
    active_revision_id: null,
    revision_status: null,
    health: decideHealth({ seen: "gone" }),
    last_error: base.id ? missingError(base.id) : base.last_error,
  };
}

const syncOf = (action: PlannedChange["action"]): SyncStatus =>
  action === "noop" ? "Synced" : action === "refused" ? "Refused" : "OutOfSync";

function fromLive(base: ObjectStatus, deployment: Deployment, input: RefreshInput): ObjectStatus {
  const latest = deployment.latest_revision_id;
  const read = input.latestStatuses.get(deployment.id);
  const revisionStatus: RevisionStatus | null =
    read ?? (latest && latest === deployment.active_revision_id ? "DEPLOYED" : base.revision_status);
  return {
    ...base,
    // Back on the control plane (recreated): the missing note no longer holds.
    last_error: isMissingError(base.last_error) ? null : base.last_error,
    id: deployment.id,
    latest_revision_id: latest,
    active_revision_id: deployment.active_revision_id,
    revision_status: revisionStatus,
    health: decideHealth({ seen: "live", deployment, latestStatus: read ?? null, previous: base }),
  };
}

/**
 * The record stamped `stamp` only when something other than the time changed: an unchanged record
 * keeps its time, so scheduled drift runs rewrite nothing and commit nothing to the status branch.
 */
function stamped(next: ObjectStatus, previous: ObjectStatus | undefined, stamp: string): ObjectStatus {
  if (previous && isDeepStrictEqual({ ...next, updated_at: previous.updated_at }, previous)) return previous;
  return { ...next, updated_at: stamp };
}

/** Pure: the status store brought up to date with live and the plan (what drift and status write). */
export function refreshStatuses(input: RefreshInput): Refreshed {
  const stamp = new Date(input.now).toISOString();
  const byName = new Map(input.live.map((d) => [d.name, d]));
  const byId = new Map(input.live.map((d) => [d.id, d]));
  const records: ObjectStatus[] = [];
  const removed: ObjectStatus[] = [];
  const seen = new Set<string>();
  for (const change of input.plan.changes) {
    const key = statusKey(change.kind, change.name);
    seen.add(key);
    const recorded = input.store.objects.get(key);
    const previous = recorded ?? blankObjectStatus(change.kind, change.name);
    let next: ObjectStatus = { ...previous, sync: syncOf(change.action) };
    if (change.kind === "Deployment") {
      const deployment = byName.get(change.name);
      next = deployment ? fromLive(next, deployment, input) : missing(next);
    } else {
      next.health = decideHealth({ seen: "no-revisions" });
    }
    if (next.sync === "Synced" && next.health === "Healthy") next.last_error = null;
    records.push(stamped(next, recorded, stamp));
  }
  for (const [key, previous] of input.store.objects) {
    if (seen.has(key)) continue;
    const deployment = (previous.id && byId.get(previous.id)) || byName.get(previous.name);
    if (previous.kind !== "Deployment" || !deployment) {
      removed.push(previous);
      continue;
    }
    records.push(stamped({ ...fromLive(previous, deployment, input), sync: "OutOfSync" }, previous, stamp));
  }
  return { records, removed };
}
