import type { Clock } from "../../clock.js";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { deletionsWithin, readPruneLedger, recordPruneDeletion } from "../../status/prune-ledger.js";
import type { PlumbError } from "../../errors.js";
import { type BootReading, bootReading } from "../../status/boot-clock.js";
import {
  DEFAULT_PRUNE_MAX,
  DEFAULT_PRUNE_WINDOW_MS,
  type PruneBudget,
  pruneAllowance,
  pruneLimitError,
} from "./prune.js";

// The deletion budget of --prune: --prune-max per --prune-window, read from and counted in the
// prune ledger of the status directory (status/prune-ledger.ts), shared by apply and the controller.

export type PruneLimits = {
  /** --prune-max; undefined: the default. */
  max?: number | undefined;
  /** --prune-window in ms; undefined: the default (1h). */
  windowMs?: number | undefined;
  /**
   * An operator's explicit `apply --prune --prune-max M`: this run may delete up to M whatever the
   * window already holds (its deletions are still counted).
   */
  lift?: boolean;
};

/** The budget now: the limits and the deletions the ledger holds within the window. */
async function loadPruneBudget(
  statusDir: string,
  limits: PruneLimits,
  now: number,
  here: BootReading | undefined,
): Promise<PruneBudget> {
  const max = limits.max ?? DEFAULT_PRUNE_MAX;
  const windowMs = limits.windowMs ?? DEFAULT_PRUNE_WINDOW_MS;
  if (limits.lift) return { max, windowMs, used: 0 };
  const used = deletionsWithin(await readPruneLedger(statusDir), now, windowMs, here).length;
  return { max, windowMs, used };
}

/**
 * The budget now and, when `deletes` go past it, the prune-limit error: then none of them may be
 * deleted (apply refuses the whole run before sending anything; the controller's sweep waits).
 */
export async function checkPruneBudget(check: {
  statusDir: string;
  limits: PruneLimits;
  now: number;
  /** Who would delete, as the error names it: "apply --prune", "controller --prune". */
  who: string;
  deletes: readonly PlannedPrune[];
  /** The clock since boot (tests inject one): on the same boot, the window is judged by it too. */
  boot?: () => BootReading | undefined;
}): Promise<{ budget: PruneBudget; refused: PlumbError | null }> {
  const here = (check.boot ?? bootReading)();
  const budget = await loadPruneBudget(check.statusDir, check.limits, check.now, here);
  const over = check.deletes.length > pruneAllowance(budget);
  return { budget, refused: over ? pruneLimitError(check.who, check.deletes, budget) : null };
}

/** Counts each deletion in the ledger (applyPrune's `counted`), at the wall clock and the clock since boot. */
export const countInLedger =
  (statusDir: string, clock: Clock, boot: () => BootReading | undefined = bootReading) =>
  (deleted: PlannedPrune): Promise<void> => {
    const since = boot();
    return recordPruneDeletion(statusDir, {
      at: new Date(clock.now()).toISOString(),
      kind: deleted.kind,
      name: deleted.name,
      id: deleted.id,
      ...(since ? { boot: since } : {}),
    });
  };
