import { useColor } from "./color.js";
import { Command } from "commander";
import { forEachEnvironment } from "./environments.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  envOption,
  outputOption,
  replaceOption,
  targetOption,
} from "./options.js";
import { formatPlanJson } from "../report/format-json.js";
import { markPlanPhase } from "../reconcile/plan/plan-run.js";
import { formatPlanMarkdown } from "../report/format-markdown.js";
import { buildReportContext } from "./report-context.js";
import { formatPlanText } from "../report/format-text.js";
import type { Plan } from "../diff/plan/plan-types.js";
import { openSession, planSession, warnUnknownSecrets, type SessionIo } from "../reconcile/session.js";
import { formatProblems } from "../manifest/format/format.js";
import { buildSavedPlan, writeSavedPlan } from "../reconcile/plan/saved-plan.js";
import { processIo } from "./process-io.js";
import { reportInvalidManifests } from "../report/report-invalid.js";
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
};

/** 1 on any error or refused change; with --detailed-exitcode 2 when something would change. */
export function planExitCode(plan: Plan, detailed: boolean): number {
  if (plan.summary.refused > 0 || plan.changes.some((c) => c.errors.length > 0)) return 1;
  return detailed && plan.summary.create + plan.summary.update > 0 ? 2 : 0;
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
      process.exitCode = await forEachEnvironment(path, flags, io, (f, envIo) => runPlan(path, f, envIo));
    },
  );
}

/** One plan (of one environment, when the repository defines environments); returns the exit code. */
async function runPlan(path: string, flags: Flags, io: PlanIo): Promise<number> {
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
    const saved = await buildSavedPlan(
      result.plan,
      result.desired,
      result.live,
      { targets: flags.target, prune: flags.prune === true, replace: flags.replace ?? [] },
      session.clock.now(),
    );
    await writeSavedPlan(flags.out, saved);
    io.stderr.write(
      `Plan saved to ${flags.out}; apply exactly it with: ${formatApplyHint(path, flags.out, flags)}\n`,
    );
  }
  return planExitCode(result.plan, flags.detailedExitcode === true);
}
