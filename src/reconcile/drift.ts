import type { FieldOrigin, Plan, PlannedChange } from "../diff/plan/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import type { ObjectStatus, StatusStore } from "../status/status-types.js";
import { statusKey } from "../status/status-types.js";

// Drift: the control plane compared with git, nothing changed. The same plan, read the other way
// round: every change apply would make is a place where live differs from what git says. Each such
// object says which side moved since plumb's last apply (the three-way model, src/diff/three-way.ts):
// only git ("change": pending, apply sends it), only live ("drift"), both ("conflict"), or not known
// ("unknown"). Drift, conflicts and unknowns are drift for the exit code; a pending change is not;
// an object an error kept from being planned is not checked (an error, exit 1).

export type DriftReason =
  | "differs" // live differs from git; apply would update it
  | "refused" // live differs in a field that cannot change (apply refuses)
  | "missing" // in git, never created
  | "vanished" // recorded in status, in git, but gone from the control plane
  | "removed-from-git"; // recorded in status and live, but no longer in git

/** Which side moved since plumb last applied: a field's FieldOrigin; "unknown" also when never applied. */
type DriftOrigin = FieldOrigin;

export type DriftItem = {
  kind: PlannedChange["kind"];
  name: string;
  id: string | null;
  reason: DriftReason;
  /** The object's: conflict or unknown if any field is, else drift if any field is, else change (pending). */
  origin: DriftOrigin;
  /** Dotted API paths that differ. */
  fields: string[];
  /** Each differing field's origin. */
  field_origins: Record<string, DriftOrigin>;
  file: string | null;
  line: number | null;
  /** The plan's change (redacted by the caller before printing); null for removed-from-git. */
  change: PlannedChange | null;
};

/**
 * An object whose plan an error stopped (a secret not resolved, a source not read: the change's
 * `not_planned`): nothing is known of its drift. Not drift, an error: drift exits 1 for it.
 */
type NotChecked = {
  kind: PlannedChange["kind"];
  name: string;
  file: string | null;
  line: number | null;
  errors: string[];
};

export type DriftReport = {
  format_version: "1";
  /** Nothing differs at all, and every object was checked. */
  in_sync: boolean;
  /** Some object drifted, conflicts or has an unknown base (exit 2); false when all that differs is pending. */
  drifted: boolean;
  summary: Record<DriftReason, number> & { in_sync: number; pending: number };
  items: DriftItem[];
  /** Objects not checked: an error stopped their plan (exit 1). */
  not_checked: NotChecked[];
};

const RANK: Record<DriftOrigin, number> = { change: 0, drift: 1, unknown: 2, conflict: 3 };
const worst = (origins: readonly DriftOrigin[]): DriftOrigin =>
  origins.reduce<DriftOrigin>((a, b) => (RANK[b] > RANK[a] ? b : a), "change");

/**
 * Each differing field's origin (a field without one: plumb never applied the object, so which side
 * moved is not known), and the object's. A create is pending (git added it) unless plumb created it
 * before (vanished: live moved).
 */
function originsOf(change: PlannedChange, reason: DriftReason, fields: readonly string[]) {
  const byField = new Map((change.fields ?? []).map((f) => [f.field, f.origin ?? "unknown"]));
  const fallback: DriftOrigin = reason === "missing" ? "change" : reason === "vanished" ? "drift" : "unknown";
  const field_origins = Object.fromEntries(fields.map((f) => [f, byField.get(f) ?? fallback]));
  const origin = fields.length === 0 ? fallback : worst(Object.values(field_origins));
  return { origin, field_origins };
}

function reasonOf(change: PlannedChange, recorded: ObjectStatus | undefined): DriftReason | null {
  if (change.action === "noop") return null;
  if (change.action === "refused") return "refused";
  if (change.action === "create") return recorded?.id ? "vanished" : "missing";
  return "differs";
}

/** Pure: the drift report of a plan, the status store and the live deployments. */
export function buildDriftReport(plan: Plan, store: StatusStore, live: readonly Deployment[]): DriftReport {
  const items: DriftItem[] = [];
  const notChecked: NotChecked[] = [];
  const inGit = new Set(plan.changes.map((c) => statusKey(c.kind, c.name)));
  let inSync = 0;
  for (const change of plan.changes) {
    // Refused for an error, not for a live difference: it was never compared (was reported as
    // "live differs from git in a field that cannot change", exit 2, for an unset secret variable).
    if (change.not_planned) {
      const { kind, name, file, line } = change;
      notChecked.push({ kind, name, file, line, errors: change.errors.map((e) => e.message) });
      continue;
    }
    const reason = reasonOf(change, store.objects.get(statusKey(change.kind, change.name)));
    if (!reason) {
      inSync += 1;
      continue;
    }
    const fields = [
      ...new Set(
        [...change.revision_fields, ...change.in_place_fields, ...change.errors.map((e) => e.field)].filter(
          Boolean,
        ),
      ),
    ];
    // A create lists its fields in the request, not as changed fields: the object is the unit.
    const listed = change.action === "create" ? [] : fields;
    items.push({
      kind: change.kind,
      name: change.name,
      id: change.id ?? store.objects.get(statusKey(change.kind, change.name))?.id ?? null,
      reason,
      ...originsOf(change, reason, listed),
      fields,
      file: change.file,
      line: change.line,
      change,
    });
  }
  const liveById = new Map(live.map((d) => [d.id, d]));
  const liveByName = new Map(live.map((d) => [d.name, d]));
  // A plan of the whole session lists what is removed inside the PATH read (prune-plan.ts): a drift
  // check of one file does not call the rest of the store removed from git.
  const removed = plan.prune && new Set(plan.prune.filter((p) => p.kind === "Deployment").map((p) => p.name));
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
      // git moved (the manifest went away), live is as applied: pending (apply --prune deletes it).
      origin: "change",
      fields: [],
      field_origins: {},
      file: null,
      line: null,
      change: null,
    });
  }
  const summary = {
    in_sync: inSync,
    pending: 0,
    differs: 0,
    refused: 0,
    missing: 0,
    vanished: 0,
    "removed-from-git": 0,
  };
  for (const item of items) {
    summary[item.reason] += 1;
    if (item.origin === "change") summary.pending += 1;
  }
  const drifted = items.some((item) => item.origin !== "change");
  const in_sync = items.length === 0 && notChecked.length === 0;
  return { format_version: "1", in_sync, drifted, summary, items, not_checked: notChecked };
}
