import { useColor } from "../color.js";
import {
  addConnectionOptions,
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
import { PlumbError } from "../../errors.js";
import { DEFAULT_PRUNE_MAX, DEFAULT_PRUNE_WINDOW_MS, plannedDeletes } from "../../reconcile/prune/prune.js";
import { checkPruneBudget } from "../../reconcile/prune/prune-budget.js";
import type { Plan } from "../../diff/plan/plan-types.js";
import { refuseStalePlan } from "../../reconcile/plan/saved-plan.js";
import { savedPlanEnvironments } from "../../reconcile/plan/saved-plan-environments.js";
import { DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_MS } from "../../apply/apply-types.js";
import { openSession, warnUnknownSecrets } from "../../reconcile/session.js";
import { checkStatusDirWritable } from "../../status/status-store.js";
import { count } from "../../report/plural.js";
import { positiveInt } from "../flag-values.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { withStateLock } from "../with-state-lock.js";
import { type ApplyIo, type Flags, type Lock, sendAndReport } from "./apply-send.js";

export type { ApplyIo } from "./apply-send.js";
import { planApplyRun, refuseStaleParts } from "./apply-saved-parts.js";
import { checkSavedPlanParts, forEachEnvironment } from "../environments.js";
import { mayDefineEnvironments } from "../../manifest/environment-scan.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";

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
    // A saved plan of environments applies the environments it holds (--env: those of them named),
    // as --env would: with the Environment documents above a PATH whose manifests name none.
    const env =
      flags.plan !== undefined &&
      !flags.env?.length &&
      (await mayDefineEnvironments(path, {
        above: true,
        requested: true,
        maxBytes: maxManifestBytesFrom(io.env),
      }))
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
