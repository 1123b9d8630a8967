import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { type Monotonic, systemMonotonic } from "../../lock/lock-types.js";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { checkPruneBudget } from "../../reconcile/prune/prune-budget.js";
import { decidePrune, type LoadedTree, type PruneDecision } from "../../reconcile/prune/prune-plan.js";
import { DEFAULT_PRUNE_DELAY_MS, type PrunePort, type PruneResult } from "../../reconcile/prune/prune.js";
import { pruneDeployments, releaseOrganizations } from "../../reconcile/apply-changes.js";
import type { Deployment } from "../../schema/deployment.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";

// controller --prune: after each scan, delete the managed deployments whose manifests were removed,
// decided as apply --prune decides (reconcile/prune-plan.ts: only records inside the manifest root,
// never one without a record or marked plumb/prune: disabled, nothing while a manifest is invalid
// or emptied, nothing when the load gave no object at all). Then two guards over time: a removal
// is deleted only once seen in two scans at least --prune-delay apart, and the deletions stay
// within --prune-max per --prune-window, counted in the status directory's prune ledger (shared
// with apply and across restarts). Over budget nothing is deleted: prune-limit is logged and a
// prune-blocked event names what waits, until the window frees room or an operator runs
// plumb apply --prune --prune-max M.

export type PruneSweepDeps = {
  enabled: boolean;
  max?: number | undefined;
  windowMs?: number | undefined;
  delayMs?: number | undefined;
  /** The manifest root the scans read (a directory). */
  root: string;
  /** Where the prune ledger lives (the status directory). */
  statusDir: string;
  statuses: ReadonlyMap<string, ObjectStatus>;
  forget: (kind: string, name: string) => Promise<void>;
  /**
   * The state lock's fence (StateLock.assertHeld): a leader that lost its lock counts no deletion in
   * the ledger (counted before its DELETE is sent, e5c3403), which is the new leader's now.
   */
  fence?: (() => void) | undefined;
  port: PrunePort;
  clock: Clock;
  /**
   * Where --prune-delay is measured (default: the suspend-aware monotonic clock of the state lock):
   * on the wall clock, a step forward between two scans confirmed a removal seen once.
   */
  monotonic?: Monotonic | undefined;
  timeoutMs: number;
  log: Logger;
  /** Asks for a scan after `ms` (a removal waiting for --prune-delay is confirmed by it). */
  rescanAfter: (ms: number) => void;
  /** Called for each deployment deleted (notifications). */
  pruned?: (name: string, id: string) => void;
  /** Called when deletions wait over the budget (once per distinct set of names). */
  blocked?: (waiting: readonly PlannedPrune[], message: string) => void;
};

const treeOf = (snapshot: DesiredSnapshot): LoadedTree => ({
  objects: [...snapshot.objects.values()].map((entry) => entry.loaded),
  problems: [...snapshot.invalid.values()].flat(),
  elsewhere: snapshot.elsewhere,
});

export function createPruneSweep(deps: PruneSweepDeps): (snapshot: DesiredSnapshot) => Promise<void> {
  const delayMs = deps.delayMs ?? DEFAULT_PRUNE_DELAY_MS;
  /** Removals seen, by name: when first seen, on the monotonic clock (the delay counts from there). */
  const seen = new Map<string, number>();
  /** The names last reported blocked, so each distinct set is reported once. */
  const blocked = { names: "" };

  /** Records of deployments no longer in git that a prune could delete (usually none or a few). */
  const goneFrom = (snapshot: DesiredSnapshot) =>
    [...deps.statuses.values()].filter(
      (s) =>
        s.kind === "Deployment" &&
        s.id !== null &&
        s.prune !== "disabled" &&
        !snapshot.objects.has(`Deployment/${s.name}`),
    );
  /** Their live deployments (planPrune matches id and name). */
  const liveOf = async (gone: readonly ObjectStatus[]): Promise<Deployment[]> => {
    const found = await Promise.all(gone.map((s) => deps.port.getDeployment(s.id!)));
    return found.filter((d): d is Deployment => d !== null);
  };

  /** A record of an OrganizationAccess no longer in git: --prune stops managing it (release). */
  const organizationGone = (snapshot: DesiredSnapshot) =>
    [...deps.statuses.values()].some(
      (s) => s.kind === "OrganizationAccess" && !snapshot.objects.has(`OrganizationAccess/${s.name}`),
    );

  return async (snapshot) => {
    if (!deps.enabled) return;
    const gone = goneFrom(snapshot);
    if (gone.length === 0 && !organizationGone(snapshot)) return void seen.clear();
    const input = {
      root: deps.root,
      records: [...deps.statuses.values()],
      tree: treeOf(snapshot),
      prune: true,
    };
    const gate = decidePrune({ ...input, live: [] });
    if (!gate.ok) {
      seen.clear();
      return logSkipped(deps.log, gate);
    }
    const decision = decidePrune({ ...input, live: await liveOf(gone) });
    if (!decision.ok) return;
    for (const name of await releaseOrganizations(decision.prune, deps))
      deps.log.info(
        { kind: "OrganizationAccess", object: name },
        "no longer managed: manifest removed from git (settings kept, record dropped)",
      );
    const removed = decision.prune.filter((p) => p.action === "delete");
    const ready = readyAfterDelay(deps, seen, removed, delayMs);
    if (ready.length === 0) return;
    const results = await deleteWithinBudget(deps, ready, blocked);
    for (const r of results) {
      seen.delete(r.name);
      if (r.outcome === "deleted") {
        deps.log.info({ kind: "Deployment", object: r.name, id: r.id }, "pruned: manifest removed from git");
        deps.pruned?.(r.name, r.id);
      } else deps.log.error({ kind: "Deployment", object: r.name, id: r.id, err: r.message }, "prune failed");
    }
  };
}

function logSkipped(log: Logger, gate: Extract<PruneDecision, { ok: false }>): void {
  const emptied = gate.problems.filter((p) => p.code === "manifest-emptied");
  for (const p of emptied) log.error({ file: p.file, code: p.code, problem: p.message }, "manifest emptied");
  log.warn({ reason: gate.reason }, "prune skipped: nothing is judged removed");
}

/**
 * --prune-delay: the removals first seen at least `delayMs` ago (`seen` keeps when each was first
 * seen, and forgets those no longer removed); asks for the scan that confirms the others.
 */
function readyAfterDelay(
  deps: Pick<PruneSweepDeps, "monotonic" | "log" | "rescanAfter">,
  seen: Map<string, number>,
  removed: readonly PlannedPrune[],
  delayMs: number,
): PlannedPrune[] {
  const now = (deps.monotonic ?? systemMonotonic)();
  for (const name of [...seen.keys()]) if (!removed.some((p) => p.name === name)) seen.delete(name);
  for (const p of removed) if (!seen.has(p.name)) seen.set(p.name, now);
  const ready = removed.filter((p) => now - seen.get(p.name)! >= delayMs);
  const waiting = removed.length - ready.length;
  if (waiting > 0) {
    const next = Math.min(...removed.filter((p) => !ready.includes(p)).map((p) => seen.get(p.name)!));
    deps.log.info(
      { waiting, delay_ms: delayMs },
      "prune: removals wait to be seen again after --prune-delay",
    );
    deps.rescanAfter(Math.max(1, next + delayMs - now));
  }
  return ready;
}

/**
 * The budget check and the deletions of apply --prune (prune-budget.ts, reconcile/apply-changes.ts):
 * over --prune-max per --prune-window nothing is deleted (prune-limit logged, `blocked` told once per
 * set of names); else each deletion is counted in the ledger.
 */
async function deleteWithinBudget(
  deps: PruneSweepDeps,
  ready: readonly PlannedPrune[],
  blocked: { names: string },
): Promise<PruneResult[]> {
  const limits = { max: deps.max, windowMs: deps.windowMs };
  const now = deps.clock.now();
  const check = { statusDir: deps.statusDir, limits, now, who: "controller --prune", deletes: ready };
  const { budget, refused } = await checkPruneBudget(check);
  if (refused) {
    const names = ready.map((p) => p.name).join(", ");
    deps.log.error({ code: refused.code, names, max: budget.max, used: budget.used }, refused.message);
    if (names !== blocked.names) deps.blocked?.(ready, refused.message);
    blocked.names = names;
    return [];
  }
  blocked.names = "";
  const settings = { clock: deps.clock, timeoutMs: deps.timeoutMs };
  return pruneDeployments(deps.port, ready, settings, {
    forget: deps.forget,
    statusDir: deps.statusDir,
    fence: deps.fence,
  });
}
