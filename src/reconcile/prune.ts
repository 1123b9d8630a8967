import type { Clock } from "../clock.js";
import type { Plan, PlannedPrune } from "../diff/plan-types.js";
import { asError, PlumbError } from "../errors.js";
import type { Deployment } from "../schema/deployment.js";

// apply --prune: delete the managed deployments whose manifests were removed (plan-prune.ts chose
// them), wait until each is gone, then drop its status record. A prune of more than --prune-max
// objects is refused as a whole before anything is sent: an emptied or wrong directory must not
// delete a tenant.

export const DEFAULT_PRUNE_MAX = 5;

export type PrunePort = {
  deleteDeployment(id: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  getDeployment(id: string, options?: { signal?: AbortSignal }): Promise<Deployment | null>;
};

export type PruneResult = {
  name: string;
  id: string;
  outcome: "deleted" | "failed" | "timeout";
  message: string;
};

export const plannedDeletes = (plan: Plan): PlannedPrune[] =>
  (plan.prune ?? []).filter((p) => p.action === "delete");

/** Throws prune-limit when the plan would delete more than `max` objects. */
export function checkPruneLimit(plan: Plan, max: number): void {
  const deletes = plannedDeletes(plan);
  if (deletes.length <= max) return;
  throw new PlumbError(
    "prune-limit",
    `apply --prune would delete ${deletes.length} deployments (${deletes.map((d) => d.name).join(", ")}), more than --prune-max ${max}; nothing was sent. Check PATH (a wrong or emptied directory?), then raise --prune-max if this is intended.`,
    { exitCode: 1 },
  );
}

export type PruneOptions = {
  clock: Clock;
  timeoutMs: number;
  pollIntervalMs: number;
  /** Drops the status record of a deployment once it is gone (the CLI's file, the controller's book). */
  forget: (kind: string, name: string) => Promise<void>;
  signal?: AbortSignal;
};

/** Deletes each in turn and waits until it is gone; its record goes once it is. */
export async function applyPrune(
  port: PrunePort,
  deletes: readonly PlannedPrune[],
  options: PruneOptions,
): Promise<PruneResult[]> {
  const results: PruneResult[] = [];
  const call = options.signal ? { signal: options.signal } : {};
  for (const target of deletes) {
    const base = { name: target.name, id: target.id };
    try {
      await port.deleteDeployment(target.id, call);
      const deadline = options.clock.now() + options.timeoutMs;
      while ((await port.getDeployment(target.id, call)) !== null) {
        if (options.clock.now() >= deadline) break;
        await options.clock.sleep(options.pollIntervalMs, options.signal);
      }
      if ((await port.getDeployment(target.id, call)) !== null) {
        results.push({
          ...base,
          outcome: "timeout",
          message: "deletion requested; still present at the timeout",
        });
        continue;
      }
      await options.forget(target.kind, target.name);
      results.push({ ...base, outcome: "deleted", message: "deleted" });
    } catch (error) {
      results.push({ ...base, outcome: "failed", message: asError(error).message });
    }
  }
  return results;
}

/** One line per deletion for the apply output (prune, or the first half of a replace). */
export const formatPruneResult = (r: PruneResult, what = ""): string =>
  `${r.outcome === "deleted" ? "-" : "✗"} ${what}Deployment ${r.name} (${r.id}): ${r.message}\n`;

/**
 * Replacements (plan-replace.ts): each old deployment is deleted and gone before its create is
 * sent. Returns the names whose old deployment could not be removed (their creates are skipped).
 */
export async function removeReplaced(
  port: PrunePort,
  plan: Plan,
  options: PruneOptions,
  log: { write(text: string): unknown },
): Promise<Set<string>> {
  const replacing = plan.changes.flatMap((c) =>
    c.replaces
      ? [{ kind: "Deployment" as const, name: c.name, id: c.replaces.id, action: "delete" as const }]
      : [],
  );
  const removed = await applyPrune(port, replacing, options);
  for (const r of removed) log.write(formatPruneResult(r, "replace: "));
  return new Set(removed.filter((r) => r.outcome !== "deleted").map((r) => r.name));
}
