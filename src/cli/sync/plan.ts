import { useColor } from "../color.js";
import { Command } from "commander";
import { forEachEnvironment } from "../environments.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  envOption,
  outputOption,
  replaceOption,
  targetOption,
} from "../options.js";
import { formatPlanJson } from "../../report/format-json.js";
import { markPlanPhase } from "../../reconcile/plan/plan-run.js";
import { formatPlanMarkdown } from "../../report/markdown/format-markdown.js";
import { buildReportContext } from "../report-context.js";
import { formatPlanText } from "../../report/format-text.js";
import type { Plan } from "../../diff/plan/plan-types.js";
import { openSession, planSession, warnUnknownSecrets, type SessionIo } from "../../reconcile/session.js";
import { formatProblems } from "../../manifest/format/format.js";
import { buildSavedPlan, type SavedPlan, writeSavedPlan } from "../../reconcile/plan/saved-plan.js";
import {
  buildSavedEnvironmentPlans,
  type PlanTarget,
  targetOf,
} from "../../reconcile/plan/saved-plan-environments.js";
import { processIo } from "../process-io.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { formatApplyHint } from "./apply-hint.js";

export type PlanIo = SessionIo;

type Flags = ConnectionFlags & {
  mode?: string;
  output: "text" | "json" | "markdown";
  target: string[];
  detailedExitcode?: boolean;
  out?: string;
  prune?: boolean;
  replace?: string[];
  env?: string[];
  /** Set by forEachEnvironment: the environment this run plans. */
  environment?: string;
};

/** With environments, each environment's saved plan, written into one --out file after the last. */
type SavedParts = {
  planned: string[];
  parts: Array<{ environment: string; target: PlanTarget; saved: SavedPlan }>;
};

/**
 * 1 on any error or refused change; with --detailed-exitcode 2 when something would change: a
 * create, an update, or (with --prune) a deletion. A deployment only removed from git and kept
 * (no --prune) changes nothing.
 */
export function planExitCode(plan: Plan, detailed: boolean): number {
  if (plan.summary.refused > 0 || plan.changes.some((c) => c.errors.length > 0)) return 1;
  const changes = plan.summary.create + plan.summary.update + (plan.summary.delete ?? 0);
  return detailed && changes > 0 ? 2 : 0;
}

/** `plumb plan [PATH]`: what apply would change, how, and the requests it would send. Sends nothing. */
export function planCommand(io: PlanIo = processIo()): Command {
  const command = new Command("plan")
    .description("Show what apply would change: creates, in-place updates, new revisions, refused changes")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(outputOption(["text", "json", "markdown"]))
    .addOption(targetOption("plan only this object"))
    .option("--detailed-exitcode", "exit 2 when there are changes (0: none, 1: error or refused)")
    .addOption(replaceOption())
    .addOption(envOption())
    .option("--prune", "plan as apply --prune would: managed deployments removed from git are to be deleted")
    .option(
      "--out <file>",
      "also save the plan with what it was computed from, for plumb apply --plan FILE (no secret values; salted fingerprints)",
    );
  return addConnectionOptions(command, "also read the status committed to this branch").action(
    async (path: string, flags: Flags) => {
      const saved: SavedParts = { planned: [], parts: [] };
      // Each environment plans the same tree: it is parsed once for all of them.
      const planIo: PlanIo = { ...io, manifestLoads: io.manifestLoads ?? new Map() };
      // An environment that cannot be planned leaves the others planned (not with --out: all or none).
      process.exitCode = await forEachEnvironment(
        path,
        flags,
        planIo,
        (f, envIo) => runPlan(path, f, envIo, saved),
        { eachAlone: flags.out === undefined },
      );
      if (flags.out !== undefined && saved.planned.length > 0) await saveEnvironments(path, flags, io, saved);
    },
  );
}

/** One plan (of one environment, when the repository defines environments); returns the exit code. */
async function runPlan(path: string, flags: Flags, io: PlanIo, saved: SavedParts): Promise<number> {
  if (flags.environment !== undefined) saved.planned.push(flags.environment);
  // Clients (and the API settings they need) are built only once the manifests are valid.
  const session = await openSession(path, flags, io);
  const result = await planSession(session, io, flags.target, undefined, {
    requireManifests: true,
    prune: flags.prune === true,
    replace: flags.replace ?? [],
  });
  if (!result.ok) {
    // The validate output; nothing was sent.
    reportInvalidManifests(io.stdout, result.problems, flags.output, "nothing planned");
    return 1;
  }
  if (result.problems.length > 0) io.stderr.write(`${formatProblems(result.problems)}\n`);
  warnUnknownSecrets(session, result, io);
  const color = useColor(io);
  const text =
    flags.output === "json"
      ? formatPlanJson(result.plan)
      : flags.output === "markdown"
        ? formatPlanMarkdown(
            result.plan,
            undefined,
            await buildReportContext(path, session.connect().api, process.env),
          )
        : formatPlanText(result.plan, { color });
  markPlanPhase("formatted");
  io.stdout.write(text);
  if (flags.out !== undefined) {
    const plan = await buildSavedPlan(
      result.plan,
      result.desired,
      result.live,
      { targets: flags.target, prune: flags.prune === true, replace: flags.replace ?? [] },
      session.clock.now(),
    );
    if (flags.environment !== undefined) {
      // Saved with the others once every environment is planned (saveEnvironments).
      const target = targetOf(session.connect().api);
      saved.parts.push({ environment: flags.environment, target, saved: plan });
    } else {
      await writeSavedPlan(flags.out, plan);
      io.stderr.write(
        `Plan saved to ${flags.out}; apply exactly it with: ${formatApplyHint(path, flags.out, flags)}\n`,
      );
    }
  }
  return planExitCode(result.plan, flags.detailedExitcode === true);
}

/** One file for every environment planned, or none when one of them could not be planned. */
async function saveEnvironments(path: string, flags: Flags, io: PlanIo, saved: SavedParts): Promise<void> {
  const done = new Set(saved.parts.map((p) => p.environment));
  const missing = saved.planned.filter((name) => !done.has(name));
  if (missing.length > 0) {
    io.stderr.write(
      `plumb: the plan was not saved to ${flags.out}: environment ${missing.join(", ")} could not be planned; fix it and plan again\n`,
    );
    return;
  }
  await writeSavedPlan(flags.out!, buildSavedEnvironmentPlans(saved.parts));
  io.stderr.write(
    `Plan of environment ${[...done].join(", ")} saved to ${flags.out}; apply exactly it with: ${formatApplyHint(path, flags.out!, flags)}\n`,
  );
}
