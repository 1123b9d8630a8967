import type { Clock } from "../../clock.js";
import type { Plan, PlannedPrune } from "../../diff/plan/plan-types.js";
import { asError, PlumbError } from "../../errors.js";
import type { Deployment } from "../../schema/deployment.js";

// apply --prune: delete the managed deployments whose manifests were removed (prune-plan.ts chose
// them), wait until each is gone, then drop its status record. Deletions are budgeted: at most
// --prune-max per --prune-window, counted in the status directory's prune ledger across runs; a
// prune over the budget is refused as a whole before anything is sent: an emptied or wrong
// directory must not delete a tenant.

export const DEFAULT_PRUNE_MAX = 5;
export const DEFAULT_PRUNE_WINDOW_MS = 3_600_000;
/** controller --prune: a removal must be seen in two scans at least this far apart. */
export const DEFAULT_PRUNE_DELAY_MS = 30_000;

/** --prune-max deletions per --prune-window; `used`: the deletions already made in the window. */
export type PruneBudget = { max: number; windowMs: number; used: number };

/** How many more deletions the budget allows now. */
export const pruneAllowance = (budget: PruneBudget): number => Math.max(0, budget.max - budget.used);

const showWindow = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;

/** prune-limit: `waiting` would go past the budget; nothing of them is deleted. */
export function pruneLimitError(
  who: string,
  waiting: readonly { name: string }[],
  budget: PruneBudget,
): PlumbError {
  const names = waiting.map((d) => d.name).join(", ");
  const already =
    budget.used > 0
      ? `, and ${budget.used} were deleted in the last ${showWindow(budget.windowMs)}: that is`
      : ",";
  return new PlumbError(
    "prune-limit",
    `${who} would delete ${waiting.length} deployments (${names})${already} more than --prune-max ${budget.max} per --prune-window ${showWindow(budget.windowMs)}; nothing was deleted. Check PATH (a wrong or emptied directory?); if the deletions are intended, run plumb apply --prune --prune-max ${waiting.length} to lift the limit once.`,
    { exitCode: 1 },
  );
}

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

export type PruneOptions = {
  clock: Clock;
  timeoutMs: number;
  pollIntervalMs: number;
  /** Drops the status record of a deployment once it is gone (the CLI's file, the controller's book). */
  forget: (kind: string, name: string) => Promise<void>;
  /** Counts a deletion before it is requested (the prune ledger); not for replacements. */
  counted?: (deleted: PlannedPrune) => Promise<void>;
  /** The state lock's fence, checked before the count: a writer that lost its lock counts nothing. */
  fence?: () => void;
  signal?: AbortSignal;
};

const DELETED_BEFORE = "deleted (its deletion was under way already: no DELETE sent again)";

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
    const deleting = target.kind === "Deployment" && target.deleting === true;
    try {
      // Counted ahead, as an intent is written (docs/apply.md "Prune"): counted after the answer, a
      // kill between the server's deletion and the ledger write left it out of the budget.
      options.fence?.();
      // One the control plane is deleting already (AWAITING_DELETE) is only waited for: its DELETE
      // landed before (a run killed meanwhile, which counted it); another would say it twice.
      if (!deleting) {
        await options.counted?.(target);
        await port.deleteDeployment(target.id, call);
      }
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
      results.push({ ...base, outcome: "deleted", message: deleting ? DELETED_BEFORE : "deleted" });
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
