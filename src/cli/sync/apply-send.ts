import { useColor } from "../color.js";
import { asError } from "../../errors.js";
import { formatPruneResult } from "../../reconcile/prune/prune.js";
import { applyChanges, type ChangeRunResult } from "../../reconcile/apply-changes.js";
import type { PlanManifestsResult } from "../../reconcile/plan/plan-run.js";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import type { ApiOptions } from "../../api/config.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { ProgressEvent } from "../../apply/apply-types.js";
import {
  formatApplyJson,
  formatApplySummary,
  plainProgress,
  ttyProgress,
} from "../../report/format-apply.js";
import { formatApplyMarkdown } from "../../report/markdown/format-apply-markdown.js";
import { buildReportContext } from "../report-context.js";
import {
  agentUrlFallback,
  appliedView,
  applyObjects,
  gitCommitOf,
  type Session,
} from "../../reconcile/session.js";
import { manifestDirOf, ownRecordsIn, publishStatus } from "../../git/status/status-source.js";
import { manifestRootOf } from "../../status/manifest-root.js";
import type { StateLock } from "../../lock/index.js";
import { listenForStop } from "./apply-stop.js";
import type { ConnectionFlags } from "../options.js";
import type { RunSettings } from "../../reconcile/apply-changes.js";
import type { SessionIo } from "../../reconcile/session.js";
import type { StateLockTiming } from "../with-state-lock.js";

// `plumb apply` once the plan is confirmed: send it (replace, apply, prune, as the controller does),
// record each object's status behind the state lock, publish the status, then print the report.

export type Lock = Pick<StateLock, "lost" | "assertHeld" | "pushFence">;

export type ApplyIo = SessionIo & {
  /** Asks on the terminal; injected by tests. */
  confirm?: (question: string) => Promise<boolean>;
  /** Where Ctrl-C / SIGTERM come from; default the process. */
  signals?: Pick<NodeJS.Process, "once" | "removeListener">;
  /** The state lock's lease and clocks; injected by tests (a short lease, a paused process). */
  lock?: StateLockTiming;
  /** How often revisions are read while waiting; injected by tests (the engine's defaults otherwise). */
  poll?: Pick<RunSettings, "pollIntervalMs" | "maxPollIntervalMs">;
};

export type Flags = ConnectionFlags & {
  target: string[];
  wait: boolean;
  timeout: number;
  concurrency: number;
  yes?: boolean;
  output: "text" | "json" | "markdown";
  lockTimeout?: number;
  /** A saved plan (plumb plan --out): apply exactly it, or refuse when anything moved since. */
  plan?: string;
  /** Delete managed deployments whose manifests were removed (at most pruneMax). */
  prune?: boolean;
  pruneMax?: number;
  pruneWindow?: number;
  /** Deployments that may be replaced (deleted, then created) for an immutable-field change. */
  replace?: string[];
  env?: string[];
  /** With environments: go on to the next environment after one that did not converge. */
  keepGoing?: boolean;
  /** Set by forEachEnvironment: the environment this run applies. */
  environment?: string;
};

export type Confirmed = {
  path: string;
  flags: Flags;
  io: ApplyIo;
  lock: Lock;
  session: Session;
  result: Extract<PlanManifestsResult, { ok: true }>;
  deletes: PlannedPrune[];
  log: { write(text: string): unknown; isTTY?: boolean };
};

/** Replace, apply and prune (reconcile/apply-changes.ts, as the controller), publish, then report. */
export async function sendAndReport(run: Confirmed): Promise<number> {
  const { flags, io, lock, session, result, log } = run;
  const { plan } = result;
  const stop = listenForStop(io.signals ?? process, lock.lost, log);
  const { api, ports } = session.connect();
  const color = useColor(io);
  const tty = Boolean(log === io.stdout && io.stdout.isTTY);
  const total = plan.summary.create + plan.summary.update;
  const live = tty ? ttyProgress(log, session.clock, { color, total }) : null;
  const started = session.clock.now();
  try {
    const settings = {
      clock: session.clock,
      wait: flags.wait,
      timeoutMs: flags.timeout,
      concurrency: flags.concurrency,
      signal: stop.signal,
      gitCommit: await gitCommitOf(run.path),
      onProgress: live ? (e: ProgressEvent) => live.onProgress(e) : plainProgress(log),
      agentUrlFallback: agentUrlFallback(api.apiUrl),
      onApplied: () => live?.finish(),
      ...io.poll,
    };
    const objects = { plan, objects: applyObjects(result), live: result.live.deployments };
    const prune = { deletes: run.deletes, statusDir: session.statusDir };
    const done = await applyChanges(ports, { ...objects, prune }, settings, fencedRecords(run), log);
    for (const p of done.pruned) log.write(formatPruneResult(p));
    const pruneOk = done.pruned.every((p) => p.outcome === "deleted");
    await publishAndReport(run, done, api, session.clock.now() - started);
    const signalName = stop.signalName();
    if (signalName) return signalName === "SIGINT" ? 130 : 143;
    const ok = done.report.ok && pruneOk && done.notRemoved.size === 0;
    return ok && !lock.lost.aborted ? 0 : 1;
  } finally {
    stop.dispose();
  }
}

/**
 * The status store's records, each write and removal checking the state lock first. `previous` is
 * what was last applied, the stores nearby included (docs/status.md "Stores above and below"): an
 * object whose secrets are not sent keeps their fingerprints, now in this store.
 */
const fencedRecords = ({ lock, session }: Confirmed) => {
  // Each record names its manifest directory: a store shared by two PATHs (docs/apply.md "Prune").
  const store = ownRecordsIn(session.statusDir, manifestRootOf(manifestDirOf(session.root)));
  return {
    previous: appliedView(session).objects,
    record: async (status: ObjectStatus) => {
      lock.assertHeld();
      await store.saveOwnObjectStatus(status);
    },
    forget: async (kind: string, name: string) => {
      lock.assertHeld();
      await store.removeOwnObjectStatus(kind, name); // never a file git tracks there
    },
    fence: () => lock.assertHeld(), // before a deletion is counted in the prune ledger
  };
};

/** Pushes the status (--status-branch), then prints the report; a failed push is thrown after it. */
async function publishAndReport(
  run: Confirmed,
  done: ChangeRunResult,
  api: ApiOptions,
  elapsedMs: number,
): Promise<void> {
  const { flags, io, log, result } = run;
  const { report } = done;
  // What was applied is reported (and stays in the local store) even when the push fails.
  let publishError: Error | undefined;
  const published = await publishStatus(
    run.session.location,
    `plumb apply: ${report.ok ? "converged" : "not converged"}`,
    run.lock.pushFence,
  ).catch((error: unknown) => void (publishError = asError(error)));
  if (published?.commit)
    log.write(`Status committed to branch ${published.branch} (${published.commit.slice(0, 12)}).\n`);
  if (flags.output === "json") io.stdout.write(formatApplyJson(report, result.plan));
  else if (flags.output === "markdown") {
    const context = await buildReportContext(run.path, api, process.env);
    io.stdout.write(formatApplyMarkdown(report, result.plan, { elapsedMs, pruned: done.pruned, context }));
  } else io.stdout.write(formatApplySummary(report, elapsedMs, { color: useColor(io) }));
  if (publishError) throw publishError;
}
