import pLimit from "p-limit";
import { formatChangeErrors } from "../diff/change-error.js";
import type { PlannedChange } from "../diff/plan-types.js";
import { PlumbError } from "../errors.js";
import type { Deployment } from "../schema/deployment.js";
import {
  type ApplyObject,
  type ApplyOptions,
  type ApplyReport,
  type ApplyResult,
  type ApplySummary,
  type VerifyResult,
} from "./apply-types.js";
import type { ApplyPorts } from "./ports.js";
import { describeSendError } from "./api-error-fields.js";
import { findOutInterruptedSend } from "./interrupted-send.js";
import { type RevisionWait, createRevisionWatcher } from "./revision-watcher.js";
import { sendChange } from "./send-change.js";
import { buildObjectStatus, fingerprintsOfBodyAsync } from "./status-record.js";
import { statusKey } from "./status-types.js";
import { runVerify } from "./verify.js";

const OK_OUTCOMES = new Set(["converged", "sent"]);

/** Maps the end of a revision wait onto the result fields. */
function waitResult(
  wait: RevisionWait,
): Pick<ApplyResult, "outcome" | "sync" | "health" | "message" | "revision_status"> {
  switch (wait.status) {
    case "DEPLOYED":
      return {
        outcome: "converged",
        sync: "Synced",
        health: "Healthy",
        message: null,
        revision_status: "DEPLOYED",
      };
    case "TIMEOUT":
      return {
        outcome: "timeout",
        sync: "Progressing",
        health: "Progressing",
        message: "timed out waiting for the revision",
        revision_status: null,
      };
    case "ABORTED":
      return {
        outcome: "interrupted",
        sync: "Progressing",
        health: "Progressing",
        message: "interrupted while waiting",
        revision_status: null,
      };
    case "VANISHED":
      return {
        outcome: "failed",
        sync: "Failed",
        health: "Unknown",
        message: wait.statusMessage,
        revision_status: null,
      };
    default:
      return {
        outcome: "failed",
        sync: "Failed",
        health: "Degraded",
        message: `revision ${wait.revisionId} ${wait.status}${wait.statusMessage ? `: ${wait.statusMessage}` : ""}`,
        revision_status: wait.status,
      };
  }
}

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
  const sendLimit = pLimit(Math.max(1, options.concurrency));
  const verifyLimit = pLimit(Math.max(1, options.concurrency));
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
  const waitingOn = new Map<string, { kind: PlannedChange["kind"]; name: string }>();

  const keys = objects.map((o) => statusKey(o.change.kind, o.change.name));
  const duplicate = keys.find((k, i) => keys.indexOf(k) !== i);
  // One pipeline per object is what keeps two operations off one deployment: refuse a plan that names one twice.
  if (duplicate)
    throw new PlumbError("plan-duplicate", `the plan names ${duplicate} twice; fix the manifests`);

  const needsLive = objects.some((o) => o.change.kind === "Deployment" && o.change.action !== "create");
  const live: Map<string, Deployment> =
    options.live ??
    (needsLive ? byName(await ports.deployments.listDeployments({ signal })) : new Map<string, Deployment>());

  async function pipeline(object: ApplyObject): Promise<ApplyResult> {
    const { change } = object;
    const key = statusKey(change.kind, change.name);
    const previous = options.previous.get(key);
    const progress = (phase: "sending" | "sent" | "waiting" | "verifying") =>
      options.onProgress?.({ kind: change.kind, name: change.name, phase, elapsed_ms: elapsed() });
    const result: ApplyResult = {
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
      health: "Healthy",
      elapsed_ms: 0,
    };
    let deployment: Deployment | null = live.get(change.name) ?? null;
    // Computed off the main thread (scrypt), awaited when the record is written.
    let fingerprints: ReturnType<typeof fingerprintsOfBodyAsync> = Promise.resolve(undefined);
    let sourceUpload: { digest: string; object_path: string } | undefined;
    let sentRequest = false;

    const done = async (): Promise<ApplyResult> => {
      result.elapsed_ms = elapsed();
      const deployed = result.revision_status === "DEPLOYED" && result.revision_id !== null;
      await options.record(
        buildObjectStatus({
          result,
          previous,
          latestRevisionId: result.revision_id ?? deployment?.latest_revision_id ?? null,
          activeRevisionId: deployed ? result.revision_id : (deployment?.active_revision_id ?? null),
          gitCommit: options.gitCommit,
          manifestDigest: object.manifestDigest,
          fingerprints: await fingerprints,
          sourceUpload,
          sent: sentRequest,
          now: clock.now(),
        }),
      );
      options.onProgress?.({
        kind: change.kind,
        name: change.name,
        phase: "done",
        result,
        elapsed_ms: result.elapsed_ms,
      });
      return result;
    };

    if (change.action === "refused" || change.errors.length > 0) {
      const why = formatChangeErrors(change.errors);
      Object.assign(result, { outcome: "skipped", sync: "Refused", health: previous?.health ?? "Unknown" });
      result.message = why || "refused";
      return done();
    }

    if (change.action !== "noop") {
      const notSent = (): ApplyResult => {
        // Nothing was sent: the previous record stays as it was.
        Object.assign(result, {
          outcome: "interrupted",
          sync: "OutOfSync",
          message: "not sent: interrupted",
        });
        result.health = previous?.health ?? "Unknown";
        result.elapsed_ms = elapsed();
        options.onProgress?.({
          kind: change.kind,
          name: change.name,
          phase: "done",
          result,
          elapsed_ms: result.elapsed_ms,
        });
        return result;
      };
      if (signal?.aborted) return notSent();
      try {
        const sent = await sendLimit(async () => {
          if (signal?.aborted) return null;
          progress("sending");
          return sendChange(ports, change, deployment, {
            clock,
            random,
            signal,
            source: object.source,
            // An internal_source create is followed by an upload and a PATCH: keep its id if they fail.
            onCreated: (created) => {
              deployment = created;
              result.id = created.id;
              fingerprints = fingerprintsOfBodyAsync(change.request?.body);
              sentRequest = true;
            },
          });
        });
        if (!sent) return notSent();
        deployment = sent.deployment ?? deployment;
        result.id = deployment?.id ?? result.id;
        result.revision_id = sent.revisionId;
        fingerprints = fingerprintsOfBodyAsync(change.request?.body);
        sourceUpload = sent.sourceUpload;
        sentRequest = true;
      } catch (error) {
        if (signal?.aborted) {
          // Cut short in flight: record it only if the server carried it out (or might have).
          const found = await findOutInterruptedSend(ports, change, deployment);
          if (found.carriedOut === false && !sentRequest) return notSent();
          Object.assign(result, {
            outcome: "interrupted",
            sync: "OutOfSync",
            health: previous?.health ?? "Unknown",
          });
          result.message =
            "interrupted while sending: the request may have been carried out; run apply again";
          if (found.carriedOut) {
            deployment = found.deployment;
            result.id = deployment.id;
            result.revision_id = change.new_revision ? deployment.latest_revision_id : null;
            fingerprints = fingerprintsOfBodyAsync(change.request?.body);
            sentRequest = true;
            Object.assign(result, { sync: "Progressing", health: "Progressing" });
            result.message = "interrupted: the request was carried out; run apply again to finish";
          }
          return done();
        }
        Object.assign(result, { outcome: "failed", sync: "Failed", health: previous?.health ?? "Unknown" });
        result.message = describeSendError(error, { loaded: object.loaded, body: change.request?.body });
        return done();
      }
      progress("sent");
    } else if (
      change.kind === "Deployment" &&
      deployment?.latest_revision_id &&
      deployment.latest_revision_id !== deployment.active_revision_id
    ) {
      // Nothing to send, but an earlier revision (e.g. from an interrupted apply) is unfinished.
      result.revision_id = deployment.latest_revision_id;
    }

    if (change.kind !== "Deployment" || !result.revision_id) {
      // OrganizationAccess, in-place patches and no-ops converge once sent.
      return verifyIfNeeded(
        object,
        result,
        deployment,
        previous?.verify_thread_id ?? null,
        previous?.health,
        done,
      );
    }
    if (!options.wait) {
      Object.assign(result, { outcome: "sent", sync: "Progressing", health: "Progressing" });
      return done();
    }
    progress("waiting");
    waitingOn.set(result.id ?? "", { kind: change.kind, name: change.name });
    const wait = await watcher.wait(result.id ?? "", result.revision_id);
    Object.assign(result, waitResult(wait));
    result.revision_id = wait.revisionId;
    result.superseded_by = wait.supersededBy;
    if (result.outcome !== "converged") return done();
    return verifyIfNeeded(
      object,
      result,
      deployment,
      previous?.verify_thread_id ?? null,
      undefined,
      done,
      true,
    );
  }

  async function verifyIfNeeded(
    object: ApplyObject,
    result: ApplyResult,
    deployment: Deployment | null,
    threadId: string | null,
    previousHealth: string | undefined,
    done: () => Promise<ApplyResult>,
    deployedNow = false,
  ): Promise<ApplyResult> {
    // A no-op re-verifies only when the last check did not pass (re-running finishes the job).
    const due =
      object.verify &&
      options.wait &&
      (deployedNow || result.action !== "noop" || previousHealth !== "Healthy");
    if (!due || !object.verify || !deployment) return done();
    options.onProgress?.({ kind: result.kind, name: result.name, phase: "verifying", elapsed_ms: elapsed() });
    const url = deployment.source_config.custom_url || options.agentUrlFallback?.(deployment) || null;
    const agent = ports.agentServer;
    const spec = object.verify;
    const verify: VerifyResult =
      url && agent
        ? await verifyLimit(() => runVerify(url, spec, threadId, { agent, clock, signal, name: result.name }))
        : {
            ok: false,
            thread_id: threadId,
            run_id: null,
            message: "no agent-server URL (custom_url) to verify against",
          };
    result.verify = verify;
    if (!verify.ok)
      Object.assign(result, {
        outcome: signal?.aborted ? "interrupted" : "failed",
        health: "Degraded",
        message: verify.message,
      });
    return done();
  }

  const results = await Promise.all(objects.map((object) => pipeline(object)));
  const summary: ApplySummary = { converged: 0, sent: 0, skipped: 0, failed: 0, timeout: 0, interrupted: 0 };
  for (const r of results) summary[r.outcome] += 1;
  return { format_version: "1", ok: results.every((r) => OK_OUTCOMES.has(r.outcome)), summary, results };
}

const byName = (deployments: Deployment[]) => new Map(deployments.map((d) => [d.name, d]));

export const isActionable = (change: PlannedChange) =>
  change.action === "create" || change.action === "update";
