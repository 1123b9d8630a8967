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

/**
 * The budget now: the limits, the deletions the ledger holds within the window, and their ids. A
 * deployment whose id is among them was counted already: a prune resumed after a kill sends the
 * DELETEs that had not landed, and those take nothing more from the budget (ids are the control
 * plane's, never reused: it is the same deployment); one still being deleted is only waited for.
 */
async function loadPruneBudget(
  statusDir: string,
  limits: PruneLimits,
  now: number,
  here: BootReading | undefined,
): Promise<{ budget: PruneBudget; counted: ReadonlySet<string> }> {
  const max = limits.max ?? DEFAULT_PRUNE_MAX;
  const windowMs = limits.windowMs ?? DEFAULT_PRUNE_WINDOW_MS;
  if (limits.lift) return { budget: { max, windowMs, used: 0 }, counted: new Set() };
  const within = deletionsWithin(await readPruneLedger(statusDir), now, windowMs, here);
  return { budget: { max, windowMs, used: within.length }, counted: new Set(within.map((e) => e.id)) };
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
  const { budget, counted } = await loadPruneBudget(check.statusDir, check.limits, check.now, here);
  // One being deleted already takes no room: nothing is sent for it (prune.ts).
  const fresh = check.deletes.filter((d) => !counted.has(d.id) && !(d.kind === "Deployment" && d.deleting));
  const over = fresh.length > pruneAllowance(budget);
  return { budget, refused: over ? pruneLimitError(check.who, fresh, budget) : null };
}

/**
 * Counts each deletion in the ledger (applyPrune's `counted`), at the wall clock and the clock since
 * boot; a deployment the ledger counted already (its DELETE sent again) is not counted twice.
 */
export const countInLedger =
  (statusDir: string, clock: Clock, boot: () => BootReading | undefined = bootReading) =>
  async (deleted: PlannedPrune): Promise<void> => {
    if ((await readPruneLedger(statusDir)).some((e) => e.id === deleted.id)) return;
    const since = boot();
    return recordPruneDeletion(statusDir, {
      at: new Date(clock.now()).toISOString(),
      kind: deleted.kind,
      name: deleted.name,
      id: deleted.id,
      ...(since ? { boot: since } : {}),
    });
  };
