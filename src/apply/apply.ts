import pLimit from "p-limit";
import type { PlannedChange } from "../diff/plan/plan-types.js";
import { PlumbError } from "../errors.js";
import type { Deployment } from "../schema/deployment.js";
import { sentNotAwaited } from "./apply-outcomes.js";
import type { Engine } from "./engine-types.js";
import { finish, finishNotSent, send, skip, startRun, verifyIfDue, waitForRevision } from "./apply-steps.js";
import { recordSent } from "./apply-records.js";
import type { ApplyObject, ApplyOptions, ApplyReport, ApplyResult, ApplySummary } from "./apply-types.js";
import type { ApplyPorts } from "./ports.js";
import { createRevisionWatcher } from "./revision-watcher.js";
import { statusKey } from "../status/status-types.js";

const OK_OUTCOMES = new Set(["converged", "accepted"]);

/**
 * Executes a plan: sends every create/update with bounded concurrency (one pipeline per object, so
 * never two operations at once on one deployment), waits for the revisions, runs spec.verify, and
 * records each object's status as soon as it is known. Refused and invalid changes are skipped and
 * reported; the others still apply. Abort (Ctrl-C) stops sending and waiting; what was sent is recorded.
 */
export async function applyPlan(
  ports: ApplyPorts,
  objects: ApplyObject[],
  options: ApplyOptions,
): Promise<ApplyReport> {
  const { clock, signal } = options;
  const random = options.random ?? Math.random;
  const start = clock.now();
  const elapsed = () => clock.now() - start;
  const waitingOn: Engine["waitingOn"] = new Map();
  const watcher = createRevisionWatcher(ports.deployments, {
    clock,
    random,
    signal,
    deadline: start + options.timeoutMs,
    pollIntervalMs: options.pollIntervalMs ?? 1_000,
    maxPollIntervalMs: options.maxPollIntervalMs ?? 15_000,
    onStatus: (id, status) => {
      const waiting = waitingOn.get(id);
      if (waiting)
        options.onProgress?.({
          ...waiting,
          phase: "waiting",
          revision_status: status,
          elapsed_ms: elapsed(),
        });
    },
  });
  const engine: Engine = {
    ports,
    options,
    random,
    elapsed,
    sendLimit: pLimit(Math.max(1, options.concurrency)),
    verifyLimit: pLimit(Math.max(1, options.concurrency)),
    watcher,
    waitingOn,
  };

  const keys = objects.map((o) => statusKey(o.change.kind, o.change.name));
  const duplicate = keys.find((k, i) => keys.indexOf(k) !== i);
  // One pipeline per object is what keeps two operations off one deployment: refuse a plan that names one twice.
  if (duplicate)
    throw new PlumbError("plan-duplicate", `the plan names ${duplicate} twice; fix the manifests`);

  const needsLive = objects.some((o) => o.change.kind === "Deployment" && o.change.action !== "create");
  const live: Map<string, Deployment> =
    options.live ??
    (needsLive ? byName(await ports.deployments.listDeployments({ signal })) : new Map<string, Deployment>());

  const results = await Promise.all(objects.map((object) => applyObject(engine, live, object)));
  return {
    format_version: "2",
    ok: results.every((r) => OK_OUTCOMES.has(r.outcome)),
    summary: summarise(results),
    results,
  };
}

/** One object's pipeline: send, record, wait for its revision, verify; its status recorded at the end. */
async function applyObject(
  engine: Engine,
  live: ReadonlyMap<string, Deployment>,
  object: ApplyObject,
): Promise<ApplyResult> {
  const { options } = engine;
  const { change } = object;
  const previous = options.previous.get(statusKey(change.kind, change.name));
  const run = startRun(object, previous, live.get(change.name) ?? null);
  if (change.action === "refused" || change.errors.length > 0) return skip(engine, run);

  if (change.action !== "noop") {
    const step = await send(engine, run);
    if (step === "not-sent") return finishNotSent(engine, run);
    if (step === "unrecorded") return finish(engine, run, false);
    if (step === "stopped") return finish(engine, run);
    await recordSent(engine, run);
  } else if (isUnfinished(change, run.deployment)) {
    // Nothing to send, but an earlier revision (e.g. from an interrupted apply) is unfinished.
    run.result.revision_id = run.deployment?.latest_revision_id ?? null;
  }

  const revisionId = change.kind === "Deployment" ? run.result.revision_id : null;
  if (!revisionId) {
    // OrganizationAccess, in-place patches and no-ops converge once sent.
    await verifyIfDue(engine, run, false);
    return finish(engine, run);
  }
  if (!options.wait) {
    Object.assign(run.result, sentNotAwaited);
    return finish(engine, run);
  }
  await waitForRevision(engine, run, revisionId);
  if (run.result.outcome === "converged") await verifyIfDue(engine, run, true);
  return finish(engine, run);
}

function summarise(results: readonly ApplyResult[]): ApplySummary {
  const summary: ApplySummary = {
    converged: 0,
    accepted: 0,
    skipped: 0,
    failed: 0,
    timeout: 0,
    interrupted: 0,
  };
  for (const r of results) summary[r.outcome] += 1;
  return summary;
}

const byName = (deployments: Deployment[]) => new Map(deployments.map((d) => [d.name, d]));

const isUnfinished = (change: PlannedChange, deployment: Deployment | null): boolean =>
  change.kind === "Deployment" &&
  !!deployment?.latest_revision_id &&
  deployment.latest_revision_id !== deployment.active_revision_id;
