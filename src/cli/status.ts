import { useColor } from "./color.js";
import { Command } from "commander";
import { addConnectionOptions, type ConnectionFlags, outputOption } from "./options.js";
import { formatStatusJson, formatStatusText } from "../report/format-status.js";
import { openSession, planSession, type SessionIo } from "../reconcile/session.js";
import { writeRefreshedStatus } from "../reconcile/status-write.js";
import { PlumbError } from "../errors.js";
import { formatProblems } from "../manifest/format.js";
import { processIo } from "./process-io.js";

type Flags = ConnectionFlags & {
  output: "text" | "json";
};

/** `plumb status [PATH]`: the status store, refreshed against live. */
export function statusCommand(io: SessionIo = processIo()): Command {
  const command = new Command("status")
    .description("Show each object's sync and health, refreshed against the control plane")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(outputOption(["text", "json"]));
  return addConnectionOptions(command, "also read the status committed to this branch").action(
    async (path: string, flags: Flags) => {
      const session = await openSession(path, flags, io);
      const result = await planSession(session, io, []);
      if (!result.ok) {
        io.stderr.write(`${formatProblems(result.problems)}\n`);
        throw new PlumbError(
          "invalid-manifests",
          "the manifests are invalid: fix them (plumb validate) to refresh status",
        );
      }
      const records = await writeRefreshedStatus(session, result);
      const color = useColor(io);
      io.stdout.write(
        flags.output === "json" ? formatStatusJson(records) : formatStatusText(records, { color }),
      );
      process.exitCode = 0;
    },
  );
}
