import type { Engine, ObjectRun } from "./engine-types.js";
import type { Deployment } from "../schema/deployment.js";
import { describeSendError } from "./api/api-error-fields.js";
import type { ApplyObject, ApplyResult, ProgressEvent } from "./apply-types.js";
import { findOutInterruptedSend } from "./interrupted-send.js";
import { sendChange } from "./send-change.js";
import { recordIntent, unrecorded } from "./apply-records.js";
import { buildObjectStatus, pruneSettingOf, appliedSpecOf } from "./status-record.js";
import type { ObjectStatus } from "../status/status-types.js";
import { runChecks } from "./verify/verify-checks.js";
import { notSent, outcomeOfWait, sendFailed, skipped } from "./apply-outcomes.js";
import { decideHealth } from "../status/health.js";
import { checksMatchApplied } from "../status/checks/checks-record-applied.js";

// The steps of one object's pipeline in applyPlan: send, wait, verify, finish. Each updates the
// object's run; the shared engine holds what all objects share (ports, limits, the watcher).

export function startRun(
  object: ApplyObject,
  previous: ObjectStatus | undefined,
  live: Deployment | null,
): ObjectRun {
  const { change } = object;
  return {
    object,
    previous,
    deployment: live,
    sent: false,
    fingerprints: Promise.resolve(undefined),
    result: {
      kind: change.kind,
      name: change.name,
      action: change.action,
      id: change.id,
      outcome: "converged",
      revision_id: null,
      revision_status: null,
      message: null,
      superseded_by: null,
      verify: null,
      sync: "Synced",
      health: decideHealth({ seen: "planned" }),
      elapsed_ms: 0,
    },
  };
}

const progress = (engine: Engine, run: ObjectRun, phase: "sending" | "sent" | "waiting" | "verifying") =>
  engine.options.onProgress?.({
    kind: run.result.kind,
    name: run.result.name,
    phase,
    elapsed_ms: engine.elapsed(),
  });

/** The object is done: records its status (unless nothing was sent) and reports it. */
export async function finish(engine: Engine, run: ObjectRun, record = true): Promise<ApplyResult> {
  const { result, deployment } = run;
  const { options } = engine;
  result.elapsed_ms = engine.elapsed();
  if (record) {
    const deployed = result.revision_status === "DEPLOYED" && result.revision_id !== null;
    const status = buildObjectStatus({
      result,
      previous: run.previous,
      latestRevisionId: result.revision_id ?? deployment?.latest_revision_id ?? null,
      activeRevisionId: deployed ? result.revision_id : (deployment?.active_revision_id ?? null),
      gitCommit: options.gitCommit,
      manifestDigest: run.object.manifestDigest,
      prune: pruneSettingOf(run.object.loaded),
      appliedSpec: appliedSpecOf(run.object.loaded),
      manifestFile: run.object.loaded?.file,
      fingerprints: run.sent ? await run.fingerprints : undefined,
      sourceUpload: run.sourceUpload,
      sent: run.sent,
      now: options.clock.now(),
    });
    // Not known to be sent (failed or cut short): the intent stays, and the next run asks live.
    if (!run.sent && run.intent) status.pending = run.intent;
    // Whatever was sent stays in the result: a record that cannot be written fails the object.
    await options
      .record(status)
      .catch((error: unknown) => Object.assign(result, unrecorded(error, run.sent)));
  }
  const event: ProgressEvent = {
    kind: result.kind,
    name: result.name,
    phase: "done",
    result,
    elapsed_ms: result.elapsed_ms,
  };
  options.onProgress?.(event);
  return result;
}

/** The end of a refused or invalid change: nothing is sent. */
export const skip = (engine: Engine, run: ObjectRun) => {
  Object.assign(run.result, skipped(run.object.change, run.previous));
  return finish(engine, run);
};

/**
 * `sent`: the request was carried out, go on; `not-sent`: nothing went out (interrupted first);
 * `stopped`: the result is final (the send failed or was cut short); `unrecorded`: nothing went
 * out because the write-ahead record could not be written (the result says why).
 */
export type SendStep = "sent" | "not-sent" | "stopped" | "unrecorded";

export async function send(engine: Engine, run: ObjectRun): Promise<SendStep> {
  const { change } = run.object;
  const { clock, signal } = engine.options;
  if (signal?.aborted) return "not-sent";
  let sent: Awaited<ReturnType<typeof sendChange>> | "unrecorded" | null;
  try {
    sent = await engine.sendLimit(async () => {
      if (signal?.aborted) return null;
      // The intent is durable before the request goes out; if it cannot be, nothing goes out.
      if (!(await recordIntent(engine, run))) return "unrecorded" as const;
      progress(engine, run, "sending");
      return sendChange(engine.ports, change, run.deployment, {
        clock,
        random: engine.random,
        signal,
        source: run.object.source,
        // An internal_source create is followed by an upload and a PATCH: keep its id if they fail.
        onCreated: (created) => {
          run.deployment = created;
          run.result.id = created.id;
          run.sent = true;
        },
      });
    });
  } catch (error) {
    if (signal?.aborted) return interrupted(engine, run);
    const message = describeSendError(error, { loaded: run.object.loaded, body: change.request?.body });
    Object.assign(run.result, sendFailed(run.previous, message));
    return "stopped";
  }
  if (!sent) return "not-sent";
  if (sent === "unrecorded") return "unrecorded";
  run.deployment = sent.deployment ?? run.deployment;
  run.result.id = run.deployment?.id ?? run.result.id;
  run.result.revision_id = sent.revisionId;
  run.sourceUpload = sent.sourceUpload;
  run.sent = true;
  progress(engine, run, "sent");
  return "sent";
}

/** Cut short in flight: recorded only if the server carried it out (or might have). */
async function interrupted(engine: Engine, run: ObjectRun): Promise<SendStep> {
  const { change } = run.object;
  const found = await findOutInterruptedSend(engine.ports, change, run.deployment);
  if (found.carriedOut === false && !run.sent) return "not-sent";
  if (!found.carriedOut) {
    Object.assign(run.result, {
      outcome: "interrupted",
      sync: "OutOfSync",
      health: decideHealth({ seen: "nothing-sent", previous: run.previous }),
      message: "interrupted while sending: the request may have been carried out; run apply again",
    });
    return "stopped";
  }
  run.deployment = found.deployment;
  run.sent = true;
  Object.assign(run.result, {
    id: found.deployment.id,
    revision_id: change.new_revision ? found.deployment.latest_revision_id : null,
    outcome: "interrupted",
    sync: "Progressing",
    health: decideHealth({ seen: "sent" }),
    message: "interrupted: the request was carried out; run apply again to finish",
  });
  return "stopped";
}

/** Nothing went out: reported, and the previous record stays as it was. */
export const finishNotSent = (engine: Engine, run: ObjectRun) => {
  Object.assign(run.result, notSent(run.previous));
  return finish(engine, run, false);
};

/** Waits for the revision the object's result names. */
export async function waitForRevision(engine: Engine, run: ObjectRun, revisionId: string): Promise<void> {
  const { result } = run;
  progress(engine, run, "waiting");
  engine.waitingOn.set(result.id ?? "", { kind: result.kind, name: result.name });
  const wait = await engine.watcher.wait(result.id ?? "", revisionId);
  Object.assign(result, outcomeOfWait(wait), {
    revision_id: wait.revisionId,
    superseded_by: wait.supersededBy,
  });
}

/** Runs spec.verify when due; a no-op re-verifies only when the last check did not pass. */
export async function verifyIfDue(engine: Engine, run: ObjectRun, deployedNow: boolean): Promise<void> {
  const { result, deployment, previous } = run;
  const { options } = engine;
  const spec = run.object.verify;
  // Or when the standing checks did not verify what the record says was applied (an in-place change
  // sent without waiting, a record of an older plumb): promote's checks gate refuses those.
  const stale = previous?.checks != null && !checksMatchApplied(previous);
  const due =
    options.wait && (deployedNow || result.action !== "noop" || previous?.health !== "Healthy" || stale);
  if (!due || !spec || !deployment) return;
  progress(engine, run, "verifying");
  const url = deployment.source_config.custom_url || options.agentUrlFallback?.(deployment) || null;
  const agent = engine.ports.agentServer;
  // Only an external_container's custom_url comes from the manifests; any other the server set.
  if (url && deployment.source !== "external_container") agent?.assignedByControlPlane?.(url);
  const threadId = previous?.verify_thread_id ?? null;
  const { clock, signal } = options;
  const revisionId =
    result.revision_id ?? deployment.active_revision_id ?? deployment.latest_revision_id ?? "";
  result.verify =
    url && agent
      ? await engine.verifyLimit(() =>
          runChecks(url, spec, threadId, {
            agent,
            clock,
            signal,
            name: result.name,
            revisionId,
            budgetMs: options.timeoutMs - engine.elapsed(),
          }),
        )
      : {
          ok: false,
          thread_id: threadId,
          run_id: null,
          message: "no agent-server URL (custom_url) to verify against",
          code: "verify-failed",
        };
  if (!result.verify.ok)
    Object.assign(result, {
      outcome: signal?.aborted ? "interrupted" : "failed",
      health: decideHealth({ seen: "checks-failed" }),
      message: result.verify.message,
    });
}
