import type { PlannedChange } from "../../diff/plan/plan-types.js";
import { PlumbError } from "../../errors.js";
import type { LoadedManifest } from "../../manifest/types.js";
import type { ServerFactsReader } from "../plan/server-facts.js";
import { buildApplyObject, findRefusedCreates } from "../plan/plan-object.js";
import { applyChanges } from "../apply-changes.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { PlannedObject, ReconcileContext, ReconcileOutcome } from "./reconcile-types.js";
import { storeOf } from "./plan-live-object.js";

// One object applied as `plumb apply` applies it, unless the installation would refuse its create
// (reconcile-object.ts).

/** A create the installation would refuse (docs/plan.md "Installation rules") is not sent. */
export async function refuseCreate(
  server: ServerFactsReader,
  loaded: LoadedManifest,
  object: PlannedObject,
  signal: AbortSignal,
): Promise<void> {
  const live = object.deployment ? [object.deployment] : [];
  const refused = await findRefusedCreates(server, [loaded], live, signal);
  if (refused.length > 0)
    throw new PlumbError(
      "create-refused",
      refused.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message} [${p.code}]`).join("; "),
    );
}

/** The engine's input exactly as `plumb apply` builds it, through the same sequence. */
export async function applyObject(
  ctx: ReconcileContext,
  object: PlannedObject,
  change: PlannedChange,
  signal: AbortSignal,
): Promise<ReconcileOutcome> {
  const { deployment, previous } = object;
  const run = {
    plan: { ...object.plan, changes: [change] },
    objects: [buildApplyObject(change, object.desired, ctx.root)],
    live: deployment ? [deployment] : [],
  };
  const settings = {
    clock: ctx.clock,
    wait: true,
    timeoutMs: ctx.timeoutMs,
    concurrency: 1,
    signal,
    gitCommit: ctx.gitCommit(),
    agentUrlFallback: ctx.agentUrlFallback,
    pollIntervalMs: ctx.pollIntervalMs,
    maxPollIntervalMs: ctx.maxPollIntervalMs,
  };
  const records = {
    previous: storeOf(object.key, previous).objects,
    record: (status: ObjectStatus) => ctx.record(status),
    forget: (kind: string, name: string) => ctx.forget(kind, name),
  };
  const { report } = await applyChanges(ctx.ports, run, settings, records);
  const result = report.results[0]!;
  // Refused and invalid changes are not retried: only a new manifest can fix them (reported instead).
  const ok = result.outcome === "converged" || result.outcome === "accepted" || result.outcome === "skipped";
  const label =
    result.outcome === "converged" ? (change.action === "noop" ? "in-sync" : "applied") : result.outcome;
  return { ok, action: change.action, result: label, drift: object.drift, apply: result, change };
}
