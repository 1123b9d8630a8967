import type { Plan, PlannedPrune } from "../diff/plan/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import { applyPlan } from "../apply/apply.js";
import type { ApplyObject, ApplyOptions, ApplyReport } from "../apply/apply-types.js";
import type { ApplyPorts } from "../apply/ports.js";
import type { ObjectStatus } from "../status/status-types.js";
import { countInLedger } from "./prune/prune-budget.js";
import { applyPrune, type PrunePort, type PruneResult, removeReplaced } from "./prune/prune.js";

// The replace → apply → prune sequence, once for `plumb apply` and the controller (its reconcile of
// one object, its prune sweep): each replaced deployment is deleted and gone before its create is
// sent (a create whose old deployment stays is not sent), then the engine applies the objects with
// options assembled here only, then the deletions --prune planned go, counted in the prune ledger.

/** Deletions are polled at this interval until the deployment is gone. */
const DELETE_POLL_MS = 1000;

/** How the engine runs: apply's flags or the controller's options. */
export type RunSettings = Pick<ApplyOptions, "clock" | "wait" | "timeoutMs" | "concurrency" | "gitCommit"> & {
  signal?: AbortSignal | undefined;
  onProgress?: ApplyOptions["onProgress"] | undefined;
  agentUrlFallback?: ApplyOptions["agentUrlFallback"];
  /** Revision polling: the engine's defaults when unset (tests and the controller may set them). */
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
};

/** Where records go: each written as soon as known, dropped once its deployment is gone. */
export type RecordPort = {
  /** The records as loaded (previous fingerprints, verify thread, health). */
  previous: Map<string, ObjectStatus>;
  record(status: ObjectStatus): Promise<void>;
  forget(kind: string, name: string): Promise<void>;
  /** The state lock's fence, checked before a prune deletion is counted in the ledger. */
  fence?: (() => void) | undefined;
};

export type ChangeRun = {
  /** Its changes, aligned with `objects`; a change with `replaces` deletes the old deployment first. */
  plan: Plan;
  objects: readonly ApplyObject[];
  /** The live deployments the plan was made against. */
  live: readonly Deployment[];
  /** --prune: the deletions planned (already checked against the budget) and the ledger's directory. */
  prune?: { deletes: readonly PlannedPrune[]; statusDir: string } | undefined;
};

export type ChangeRunResult = {
  report: ApplyReport;
  /** Replaced deployments whose old one could not be removed (their creates were not sent). */
  notRemoved: ReadonlySet<string>;
  pruned: PruneResult[];
};

/** The engine's options from the settings, the live deployments by name and the records. */
export function buildApplyOptions(
  settings: RunSettings,
  live: readonly Deployment[],
  records: Pick<RecordPort, "previous" | "record">,
): ApplyOptions {
  const { onProgress, pollIntervalMs, maxPollIntervalMs } = settings;
  return {
    clock: settings.clock,
    wait: settings.wait,
    timeoutMs: settings.timeoutMs,
    concurrency: settings.concurrency,
    signal: settings.signal,
    live: new Map(live.map((d) => [d.name, d])),
    previous: records.previous,
    record: (status) => records.record(status),
    gitCommit: settings.gitCommit,
    agentUrlFallback: settings.agentUrlFallback,
    ...(onProgress ? { onProgress } : {}),
    ...(pollIntervalMs ? { pollIntervalMs } : {}),
    ...(maxPollIntervalMs ? { maxPollIntervalMs } : {}),
  };
}

type DeleteOptions = Pick<RunSettings, "clock" | "timeoutMs" | "signal">;

const removalsOf = (settings: DeleteOptions, records: Pick<RecordPort, "forget">) => ({
  clock: settings.clock,
  timeoutMs: settings.timeoutMs,
  pollIntervalMs: DELETE_POLL_MS,
  forget: records.forget,
  ...(settings.signal ? { signal: settings.signal } : {}),
});

/** Deletes removed deployments (prune), each counted in the prune ledger of `statusDir` before it is requested. */
export function pruneDeployments(
  port: PrunePort,
  deletes: readonly PlannedPrune[],
  settings: DeleteOptions,
  records: Pick<RecordPort, "forget" | "fence"> & { statusDir: string },
): Promise<PruneResult[]> {
  const counted = countInLedger(records.statusDir, settings.clock);
  const fence = records.fence ? { fence: records.fence } : {};
  return applyPrune(port, deletes, { ...removalsOf(settings, records), counted, ...fence });
}

const silent = { write: () => undefined };

/** Replace, apply, prune: see above. `out` gets one line per replacement's deletion. */
export async function applyChanges(
  ports: ApplyPorts & { controlPlane: PrunePort },
  run: ChangeRun,
  settings: RunSettings & { onApplied?: () => void },
  records: RecordPort,
  out: { write(text: string): unknown } = silent,
): Promise<ChangeRunResult> {
  const { onApplied, ...engine } = settings;
  const notRemoved = await removeReplaced(ports.controlPlane, run.plan, removalsOf(engine, records), out);
  const replaced = new Set(run.plan.changes.filter((c) => c.replaces).map((c) => c.name));
  const objects = run.objects.filter((o) => !(o.change.replaces && notRemoved.has(o.change.name)));
  // A replaced deployment's live state is the old one's: its create must not be compared with it.
  const live = run.live.filter((d) => !replaced.has(d.name));
  const report = await applyPlan(ports, objects, buildApplyOptions(engine, live, records));
  onApplied?.();
  const { prune } = run;
  const pruned = prune
    ? await pruneDeployments(ports.controlPlane, prune.deletes, engine, { ...records, ...prune })
    : [];
  for (const name of await releaseOrganizations(run.plan.prune, records))
    out.write(
      `- OrganizationAccess ${name}: no longer managed (removed from git; its settings stay as they are, its status record is dropped)\n`,
    );
  return { report, notRemoved, pruned };
}

/**
 * --prune of a removed OrganizationAccess (plan-prune.ts): nothing to delete, so plumb stops
 * managing it: its record is dropped, nothing is sent. Kept, it stayed in the store for ever.
 * Returns the names released.
 */
export async function releaseOrganizations(
  prune: readonly PlannedPrune[] | undefined,
  records: Pick<RecordPort, "forget">,
): Promise<string[]> {
  const released: string[] = [];
  for (const p of prune ?? [])
    if (p.action === "release") {
      await records.forget(p.kind, p.name);
      released.push(p.name);
    }
  return released;
}
