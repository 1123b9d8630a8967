import type { Deployment } from "../../schema/deployment.js";
import { sortByName } from "../values.js";
import type { Plan, PlannedPrune } from "./plan-types.js";

// Objects plumb manages (they have a status record: plumb created or adopted them) whose manifests
// are gone from git. plan always lists them; with --prune they are to be deleted, otherwise they
// are orphans, kept. A deployment without a record is never touched: plumb did not create it.
// Only records inside the scope that was read count: a plan of one file judges only the objects
// recorded in that file, never the rest of the store. Pure.

export type ManagedRecord = {
  kind: string;
  name: string;
  id: string | null;
  prune?: "disabled" | null | undefined;
  /** The manifest file that last defined it, relative to the manifest directory. */
  manifest_file?: string | null | undefined;
};

/**
 * What was read: the whole manifest directory (`file: null`), or the one file PATH named (its path
 * relative to the manifest directory, i.e. its name).
 */
export type PruneScope = { file: string | null };

/** True when the record's manifest lies inside what was read, so its absence means removal. */
function insideScope(record: ManagedRecord, scope: PruneScope): boolean {
  // A record written before files were recorded is judged only by a read of the whole directory.
  if (scope.file === null) return true;
  return record.manifest_file === scope.file;
}

export function planPrune(
  managed: Iterable<ManagedRecord>,
  desired: ReadonlySet<string>,
  live: readonly Deployment[],
  prune: boolean,
  scope: PruneScope = { file: null },
): PlannedPrune[] {
  // Keyed by id or null: a record without an id was never created, and no live deployment has none.
  const byId = new Map<string | null, Deployment>(live.map((d) => [d.id, d]));
  const out: PlannedPrune[] = [];
  for (const record of managed) {
    if (desired.has(`${record.kind}/${record.name}`) || !insideScope(record, scope)) continue;
    if (record.kind === "OrganizationAccess") {
      out.push(releasedOrganization(record, prune));
      continue;
    }
    if (record.kind !== "Deployment") continue;
    const still = byId.get(record.id);
    if (!still || still.name !== record.name) continue; // already gone (or not the one plumb made)
    const refused = record.prune === "disabled" ? "its manifest said plumb/prune: disabled" : undefined;
    const action = prune && !refused ? "delete" : "orphan";
    // Being deleted already (a prune killed after its DELETE landed): resumed, it waits, sends none.
    const deleting = action === "delete" && still.status === "AWAITING_DELETE";
    out.push({
      kind: "Deployment",
      name: record.name,
      id: still.id,
      action,
      ...(refused ? { refused } : {}),
      ...(deleting ? { deleting: true as const } : {}),
    });
  }
  return sortByName(out);
}

/**
 * A removed OrganizationAccess: the organization cannot be deleted, so its settings stay as they
 * are; --prune stops managing them by dropping the record. Kept for ever, it was shown and its
 * applied settings were taken as the last applied ones by a later manifest (three-way.ts).
 */
function releasedOrganization(record: ManagedRecord, prune: boolean): PlannedPrune {
  const why = "an organization's settings cannot be deleted: they stay as they are";
  return {
    kind: "OrganizationAccess",
    name: record.name,
    id: record.id ?? "",
    action: prune ? "release" : "orphan",
    refused: prune
      ? `${why}; this apply stops managing them (drops the status record, sends nothing)`
      : `${why}; apply --prune stops managing them (drops the status record, sends nothing)`,
  };
}

/** The plan with its prune list and their counts in the summary. */
export function withPrune(plan: Plan, prune: PlannedPrune[]): Plan {
  const count = (action: PlannedPrune["action"]) => prune.filter((p) => p.action === action).length;
  // A released organization is kept as it is too: "removed from git (kept)".
  const orphan = count("orphan") + count("release");
  return { ...plan, summary: { ...plan.summary, orphan, delete: count("delete") }, prune };
}
