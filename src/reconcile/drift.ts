import type { Plan, PlannedChange } from "../diff/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import type { RevisionStatus } from "../schema/revision.js";
import type { HealthStatus, ObjectStatus, StatusStore } from "../status/status-types.js";
import { statusKey } from "../status/status-types.js";

// Drift: the control plane compared with git, nothing changed. The same plan, read the other way
// round: every change apply would make is a place where live differs from what git says.

export type DriftReason =
  | "differs" // live differs from git; apply would update it
  | "refused" // live differs in a field that cannot change (apply refuses)
  | "missing" // in git, never created
  | "vanished" // recorded in status, in git, but gone from the control plane
  | "removed-from-git"; // recorded in status and live, but no longer in git

export type DriftItem = {
  kind: PlannedChange["kind"];
  name: string;
  id: string | null;
  reason: DriftReason;
  /** Dotted API paths that differ. */
  fields: string[];
  file: string | null;
  line: number | null;
  /** The plan's change (redacted by the caller before printing); null for removed-from-git. */
  change: PlannedChange | null;
};

export type DriftReport = {
  format_version: "1";
  in_sync: boolean;
  summary: Record<DriftReason, number> & { in_sync: number };
  items: DriftItem[];
};

function reasonOf(change: PlannedChange, recorded: ObjectStatus | undefined): DriftReason | null {
  if (change.action === "noop") return null;
  if (change.action === "refused") return "refused";
  if (change.action === "create") return recorded?.id ? "vanished" : "missing";
  return "differs";
}

/** Pure: the drift report of a plan, the status store and the live deployments. */
export function buildDriftReport(plan: Plan, store: StatusStore, live: readonly Deployment[]): DriftReport {
  const items: DriftItem[] = [];
  const inGit = new Set(plan.changes.map((c) => statusKey(c.kind, c.name)));
  let inSync = 0;
  for (const change of plan.changes) {
    const reason = reasonOf(change, store.objects.get(statusKey(change.kind, change.name)));
    if (!reason) {
      inSync += 1;
      continue;
    }
    const fields = [
      ...change.revision_fields,
      ...change.in_place_fields,
      ...change.errors.map((e) => e.field),
    ];
    items.push({
      kind: change.kind,
      name: change.name,
      id: change.id ?? store.objects.get(statusKey(change.kind, change.name))?.id ?? null,
      reason,
      fields: [...new Set(fields.filter(Boolean))],
      file: change.file,
      line: change.line,
      change,
    });
  }
  const liveById = new Map(live.map((d) => [d.id, d]));
  const liveByName = new Map(live.map((d) => [d.name, d]));
  // A plan of the whole session lists what is removed inside the PATH read (prune-plan.ts): a drift
  // check of one file does not call the rest of the store removed from git.
  const removed = plan.prune && new Set(plan.prune.map((p) => p.name));
  for (const [key, recorded] of store.objects) {
    if (inGit.has(key) || recorded.kind !== "Deployment") continue;
    if (removed && !removed.has(recorded.name)) continue;
    const still = (recorded.id && liveById.get(recorded.id)) || liveByName.get(recorded.name);
    // Gone from git and from the control plane: nothing left to manage, not drift.
    if (!still) continue;
    items.push({
      kind: recorded.kind,
      name: recorded.name,
      id: still.id,
      reason: "removed-from-git",
      fields: [],
      file: null,
      line: null,
      change: null,
    });
  }
  const summary = { in_sync: inSync, differs: 0, refused: 0, missing: 0, vanished: 0, "removed-from-git": 0 };
  for (const item of items) summary[item.reason] += 1;
  return { format_version: "1", in_sync: items.length === 0, summary, items };
}

/** Health from live alone: the latest revision is active → Healthy; a failed one → Degraded. */
export function liveHealth(
  deployment: Deployment,
  latestStatus: RevisionStatus | null,
  previous: ObjectStatus | undefined,
): HealthStatus {
  if (deployment.latest_revision_id && deployment.latest_revision_id === deployment.active_revision_id) {
    // A failed verify on this very revision keeps it Degraded until a check passes.
    const verifiedBad =
      previous?.health === "Degraded" && previous.active_revision_id === deployment.active_revision_id;
    return verifiedBad ? "Degraded" : "Healthy";
  }
  if (
    latestStatus &&
    ["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "INTERRUPTED"].includes(latestStatus)
  ) {
    return "Degraded";
  }
  return deployment.latest_revision_id ? "Progressing" : "Unknown";
}
