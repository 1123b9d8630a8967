import { useColor } from "../color.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  lockTimeoutOption,
  outputOption,
  parseDuration,
  replaceOption,
  targetOption,
  envOption,
} from "../options.js";
import { createInterface } from "node:readline/promises";
import { Command, Option } from "commander";
import { formatPlanJson } from "../../report/format-json.js";
import { formatPlanText } from "../../report/format-text.js";
import { asError, PlumbError } from "../../errors.js";
import {
  DEFAULT_PRUNE_MAX,
  DEFAULT_PRUNE_WINDOW_MS,
  formatPruneResult,
  plannedDeletes,
} from "../../reconcile/prune/prune.js";
import { checkPruneBudget } from "../../reconcile/prune/prune-budget.js";
import { applyChanges, type ChangeRunResult, type RunSettings } from "../../reconcile/apply-changes.js";
import type { PlanManifestsResult } from "../../reconcile/plan/plan-run.js";
import type { Plan, PlannedPrune } from "../../diff/plan/plan-types.js";
import type { ApiOptions } from "../../api/config.js";
import type { ObjectStatus } from "../../status/status-types.js";
import { refuseStalePlan } from "../../reconcile/plan/saved-plan.js";
import { savedPlanEnvironments } from "../../reconcile/plan/saved-plan-environments.js";
import { DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_MS, type ProgressEvent } from "../../apply/apply-types.js";
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
  openSession,
  type Session,
  type SessionIo,
  warnUnknownSecrets,
} from "../../reconcile/session.js";
import { ownRecordsIn, publishStatus } from "../../git/status-source.js";
import { checkStatusDirWritable } from "../../status/status-store.js";
import { count } from "../../report/plural.js";
import { positiveInt } from "../flag-values.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { type StateLockTiming, withStateLock } from "../with-state-lock.js";
import type { StateLock } from "../../lock/index.js";
import { listenForStop } from "./apply-stop.js";
import { planApplyRun, refuseStaleParts } from "./apply-saved-parts.js";
import { checkSavedPlanParts, forEachEnvironment } from "../environments.js";
import { mayDefineEnvironments } from "../../manifest/environment-scan.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";

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

type Flags = ConnectionFlags & {
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

export async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim() === "yes";
  } finally {
    rl.close();
  }
}

const defaultIo = (): ApplyIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

/** `plumb apply [PATH]`: plan, confirm, send, wait for revisions, verify, record status. */
export function applyCommand(io: ApplyIo = defaultIo()): Command {
  const command = new Command("apply")
    .description("Make the control plane match the manifests: plan, confirm, send, wait for DEPLOYED, verify")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(targetOption("apply only this object"))
    .option("--wait", "wait for each new revision to be DEPLOYED", true)
    .option("--no-wait", "return once every request is accepted")
    .addOption(
      new Option("--timeout <duration>", "how long to wait for revisions and verify (e.g. 90s, 20m, 1h)")
        .argParser(parseDuration)
        .default(DEFAULT_TIMEOUT_MS, "20m"),
    )
    .option("--concurrency <n>", "objects sent at once", positiveInt, DEFAULT_CONCURRENCY)
    .option("-y, --yes", "apply without asking (required when not on a terminal)")
    .addOption(lockTimeoutOption())
    .addOption(replaceOption())
    .option(
      "--prune",
      "also delete deployments plumb manages (status records) whose manifests were removed; never one it did not create or adopt, never one marked plumb/prune: disabled",
    )
    .option(
      "--prune-max <n>",
      `refuse the whole apply when --prune would delete more than this many deployments per --prune-window (default ${DEFAULT_PRUNE_MAX}, counted with the deletions already made in the window; given explicitly it lifts that count for this apply)`,
      positiveInt,
    )
    .addOption(
      new Option("--prune-window <duration>", "the window --prune-max counts deletions in")
        .argParser(parseDuration)
        .default(DEFAULT_PRUNE_WINDOW_MS, "1h"),
    )
    .option(
      "--plan <file>",
      "apply the plan saved by plumb plan --out FILE: refused as a whole (plan-stale) if a manifest, live deployment or secret changed since",
    )
    .addOption(outputOption(["text", "json", "markdown"]))
    .addOption(envOption())
    .option(
      "--keep-going",
      "with environments (applied in promotion order): go on to the next environment after one that did not converge or failed (default: stop there, the rest not applied)",
    );
  return addConnectionOptions(
    command,
    "also commit the status to this branch of the manifest repository and push",
  ).action(async (path: string, flags: Flags) => {
    // Once per environment (--env; docs/environments.md), each under its own state lock; else once.
    // A saved plan of environments applies the environments it holds (--env: those of them named).
    const env =
      flags.plan !== undefined &&
      !flags.env?.length &&
      (await mayDefineEnvironments(path, { above: true, maxBytes: maxManifestBytesFrom(io.env) }))
        ? await savedPlanEnvironments(flags.plan)
        : flags.env;
    // The checks before any environment is applied share one parse of the tree; each environment's
    // apply reads it again, under its lock.
    const checks = { ...io, manifestLoads: new Map() };
    await checkSavedPlanParts(path, { ...flags, env }, checks);
    await refuseStaleParts(path, { ...flags, env }, checks);
    process.exitCode = await forEachEnvironment(
      path,
      { ...flags, env },
      io,
      (f, envIo) => runApply(path, f, { ...io, ...envIo }),
      { stopOnFailure: true },
    );
  });
}

export async function runApply(path: string, flags: Flags, io: ApplyIo): Promise<number> {
  // One writer per status store: the lock is held from before the store is read until the end.
  const timing = { ...io.lock, say: (line: string) => void io.stderr.write(`plumb: ${line}\n`) };
  return withStateLock(path, flags, "plumb apply", (lock) => runApplyLocked(path, flags, io, lock), timing);
}

type Lock = Pick<StateLock, "lost" | "assertHeld" | "pushFence">;

async function runApplyLocked(path: string, flags: Flags, io: ApplyIo, lock: Lock): Promise<number> {
  // The fence: every request that may change something, every record and the push check the lease first.
  const session = await openSession(path, flags, { ...io, beforeWrite: lock.assertHeld });
  // Nothing is sent when its record could not be written (e.g. --status-dir on a read-only place).
  await checkStatusDirWritable(session.statusDir);
  // With environments, this environment's part, made against the control plane its client reaches.
  const { saved, result } = await planApplyRun(session, flags, io);
  if (!result.ok) {
    reportInvalidManifests(io.stdout, result.problems, flags.output, "nothing applied");
    return 1;
  }
  if (saved) await refuseStalePlan(flags.plan!, saved, result);
  const deletes = plannedDeletes(result.plan);
  if (deletes.length > 0) {
    // Over the budget the whole apply is refused before anything is sent.
    const limits = { max: flags.pruneMax, windowMs: flags.pruneWindow, lift: flags.pruneMax !== undefined };
    const check = { statusDir: session.statusDir, limits, now: session.clock.now(), deletes };
    const { refused } = await checkPruneBudget({ ...check, who: "apply --prune" });
    if (refused) throw refused;
  }
  warnUnknownSecrets(session, result, io);
  // JSON and Markdown own stdout: the plan, progress and prompts go to stderr.
  const log = flags.output !== "text" ? io.stderr : io.stdout;
  log.write(formatPlanText(result.plan, { color: flags.output !== "text" ? false : useColor(io) }));
  if (!(await confirmApply(result.plan, deletes.length, flags, io, log))) return 1;
  return sendAndReport({ path, flags, io, lock, session, result, deletes, log });
}

/** Asks before anything is sent, unless --yes or nothing is to be sent; refuses off a terminal. */
async function confirmApply(
  plan: Plan,
  deletes: number,
  flags: Flags,
  io: ApplyIo,
  log: { write(text: string): unknown },
): Promise<boolean> {
  const toSend = plan.summary.create + plan.summary.update + deletes;
  if (toSend === 0 || flags.yes) return true;
  if (!io.confirm && !io.stdin?.isTTY) {
    if (flags.output === "json") io.stdout.write(formatPlanJson(plan));
    throw new PlumbError(
      "apply-needs-confirmation",
      "not on a terminal, so plumb cannot ask: review the plan above and run again with --yes",
    );
  }
  const ask = io.confirm ?? askOnTerminal;
  if (await ask(`\nApply ${count(toSend, "change")}? Only 'yes' will be accepted: `)) return true;
  log.write("Apply cancelled: nothing was sent.\n");
  return false;
}

type Confirmed = {
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
async function sendAndReport(run: Confirmed): Promise<number> {
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
  const store = ownRecordsIn(session.statusDir); // git's answer kept for this run
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
