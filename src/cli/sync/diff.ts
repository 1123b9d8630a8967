import { Command } from "commander";
import { formatProblems } from "../../manifest/format/format.js";
import { openSession, planSession, type SessionIo, warnUnknownSecrets } from "../../reconcile/session.js";
import { formatPlanText } from "../../report/format-text.js";
import { formatYamlDiff } from "../../report/format-yaml-diff.js";
import { liveAsShown } from "../../reconcile/plan/live-secrets.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { useColor } from "../color.js";
import { addConnectionOptions, type ConnectionFlags, envOption, targetOption } from "../options.js";
import { forEachEnvironment } from "../environments.js";
import { planExitCode } from "./plan.js";
import { processIo } from "../process-io.js";

type Flags = ConnectionFlags & { target: string[]; detailedExitcode?: boolean; env?: string[] };

/** `plumb diff FILE`: the plan of one manifest file, and each object as a unified YAML diff. Sends nothing. */
export function diffCommand(io: SessionIo = processIo()): Command {
  const command = new Command("diff")
    .description(
      "Show what apply would change for one manifest file: its plan and a unified YAML diff of live against it",
    )
    .argument("<file>", "a manifest file (or directory)")
    .addOption(targetOption("diff only this object"))
    .option("--detailed-exitcode", "exit 2 when there are changes (0: none, 1: error or refused)")
    .addOption(envOption());
  return addConnectionOptions(command, "also read the status committed to this branch").action(
    async (file: string, flags: Flags) => {
      // Once per environment (--env; docs/environments.md): FILE is then the directory holding them.
      process.exitCode = await forEachEnvironment(file, flags, io, (f, envIo) => runDiff(file, f, envIo), {
        eachAlone: true,
      });
    },
  );
}

async function runDiff(file: string, flags: Flags, io: SessionIo): Promise<number> {
  const session = await openSession(file, flags, io);
  const result = await planSession(session, io, flags.target, undefined, { requireManifests: true });
  if (!result.ok) {
    reportInvalidManifests(io.stdout, result.problems, "text", "nothing compared");
    return 1;
  }
  if (result.problems.length > 0) io.stderr.write(`${formatProblems(result.problems)}\n`);
  warnUnknownSecrets(session, result, io);
  const color = useColor(io);
  io.stdout.write(formatPlanText(result.plan, { color }));
  // Live shown whole: a secret of the run a server put in a field is redacted (docs/security.md).
  io.stdout.write(`\n${formatYamlDiff(result.plan, liveAsShown(result.live, session.redactor), { color })}`);
  return planExitCode(result.plan, flags.detailedExitcode === true);
}
