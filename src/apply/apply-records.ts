import { PlumbError } from "../errors.js";
import { sendFailed } from "./apply-outcomes.js";
import type { Engine, ObjectRun } from "./engine-types.js";
import { buildIntent } from "../status/pending-intent.js";
import { decideHealth } from "../status/health.js";
import {
  buildObjectStatus,
  fingerprintsOfBodyAsync,
  pruneSettingOf,
  appliedSpecOf,
} from "./status-record.js";

// The engine's write-ahead records (docs/apply.md "Write-ahead status"): the intent before a
// request goes out, the sent record before anything is awaited, and what a failed write means.

/**
 * Write-ahead: before a request goes out, the record durably says what is about to be sent (the
 * secrets' salted fingerprints, digest, what live looked like), so a crash at any later moment
 * leaves enough for the next run to tell whether it landed (pending-intent.ts). False when the
 * record cannot be written: then nothing is sent.
 */
export async function recordIntent(engine: Engine, run: ObjectRun): Promise<boolean> {
  const { options } = engine;
  const { change } = run.object;
  run.fingerprints = fingerprintsOfBodyAsync(change.request?.body, run.object.loaded);
  const intent = buildIntent({
    fingerprints: await run.fingerprints,
    manifestDigest: run.object.manifestDigest,
    gitCommit: options.gitCommit,
    live: change.action === "create" ? null : run.deployment,
    now: options.clock.now(),
    sourceDigest: change.upload?.digest,
  });
  const base = run.previous ?? {
    ...buildObjectStatus({
      result: {
        ...run.result,
        outcome: "interrupted",
        sync: "OutOfSync",
        health: decideHealth({ seen: "nothing-sent", previous: undefined }),
      },
      previous: undefined,
      latestRevisionId: null,
      activeRevisionId: null,
      gitCommit: null,
      manifestDigest: null,
      fingerprints: undefined,
      sent: false,
      now: options.clock.now(),
    }),
    last_error: null,
  };
  try {
    await options.record({ ...base, pending: intent, updated_at: intent.started_at });
    run.intent = intent;
    return true;
  } catch (error) {
    Object.assign(run.result, sendFailed(run.previous, unrecorded(error, false).message));
    return false;
  }
}

/**
 * Sent and accepted: recorded at once (ids, the new revision, fingerprints; Progressing), before
 * anything is awaited, so a crash while waiting or verifying loses nothing.
 */
export async function recordSent(engine: Engine, run: ObjectRun): Promise<void> {
  const { options } = engine;
  const { result, deployment } = run;
  const status = buildObjectStatus({
    result: { ...result, sync: "Progressing", health: decideHealth({ seen: "sent" }), outcome: "accepted" },
    previous: run.previous,
    latestRevisionId: result.revision_id ?? deployment?.latest_revision_id ?? null,
    activeRevisionId: deployment?.active_revision_id ?? null,
    gitCommit: options.gitCommit,
    manifestDigest: run.object.manifestDigest,
    prune: pruneSettingOf(run.object.loaded),
    appliedSpec: appliedSpecOf(run.object.loaded),
    manifestFile: run.object.loaded?.file,
    fingerprints: await run.fingerprints,
    sourceUpload: run.sourceUpload,
    sent: true,
    now: options.clock.now(),
  });
  // The previous record is now this one: later writes build on it (verify thread, fingerprints).
  await options.record(status).then(
    () => void (run.previous = status),
    // finish() writes again and reports a failure there; the send itself stands.
    () => undefined,
  );
}

/** The result fields of an object whose record could not be written. */
export function unrecorded(
  error: unknown,
  sent: boolean,
): { outcome: "failed"; sync: "Unknown"; message: string } {
  const reason = error instanceof Error ? error.message : String(error);
  const code = error instanceof PlumbError ? error.code : "status-write-failed";
  // Fenced out (paused past its lease, another run took the lock): nothing is wrong with the store.
  const next =
    code === "lock-lost"
      ? "the run that holds the state lock now, or the next one, finds what is live"
      : "fix the status directory and run again (the next run finds what is live)";
  return {
    outcome: "failed",
    sync: "Unknown",
    message: sent
      ? `sent, but its status record could not be written: ${reason} [${code}]; ${next}`
      : `not sent: its status record could not be written first: ${reason} [${code}]`,
  };
}
