import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { applyPrune, DEFAULT_PRUNE_MAX, type PrunePort } from "../reconcile/prune.js";
import { type ObjectStatus, statusKey } from "../status/status-types.js";
import type { DesiredSnapshot } from "./desired.js";

// controller --prune: after each scan, delete the managed deployments (status records) whose
// manifests are gone, as apply --prune does, with the same safety: never a deployment without a
// record, never one recorded with plumb/prune: disabled, never more than --prune-max in one scan,
// and nothing at all while any manifest file is invalid (its objects only look removed).

export type PruneSweepDeps = {
  enabled: boolean;
  max?: number | undefined;
  statuses: ReadonlyMap<string, ObjectStatus>;
  forget: (kind: string, name: string) => Promise<void>;
  port: PrunePort;
  clock: Clock;
  timeoutMs: number;
  log: Logger;
  /** Called for each deployment deleted (notifications). */
  pruned?: (name: string, id: string) => void;
};

export function createPruneSweep(deps: PruneSweepDeps): (snapshot: DesiredSnapshot) => Promise<void> {
  const max = deps.max ?? DEFAULT_PRUNE_MAX;
  return async (snapshot) => {
    if (!deps.enabled) return;
    const orphans = [...deps.statuses.values()].filter(
      (s) => s.kind === "Deployment" && s.id !== null && !snapshot.objects.has(statusKey(s.kind, s.name)),
    );
    const deletable = orphans.filter((s) => s.prune !== "disabled");
    if (deletable.length === 0) return;
    if (snapshot.invalid.size > 0) {
      deps.log.warn({ orphans: deletable.length }, "prune skipped while manifests are invalid");
      return;
    }
    if (deletable.length > max) {
      deps.log.error(
        { code: "prune-limit", count: deletable.length, max, names: deletable.map((s) => s.name).join(", ") },
        "prune refused: more deployments removed from git than --prune-max; nothing deleted",
      );
      return;
    }
    const results = await applyPrune(
      deps.port,
      deletable.map((s) => ({
        kind: "Deployment" as const,
        name: s.name,
        id: s.id!,
        action: "delete" as const,
      })),
      { clock: deps.clock, timeoutMs: deps.timeoutMs, pollIntervalMs: 1000, forget: deps.forget },
    );
    for (const r of results) {
      if (r.outcome === "deleted") {
        deps.log.info({ kind: "Deployment", object: r.name, id: r.id }, "pruned: manifest removed from git");
        deps.pruned?.(r.name, r.id);
      } else deps.log.error({ kind: "Deployment", object: r.name, id: r.id, err: r.message }, "prune failed");
    }
  };
}
