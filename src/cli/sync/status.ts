import { useColor } from "../color.js";
import { Command } from "commander";
import {
  addConnectionOptions,
  type ConnectionFlags,
  envOption,
  lockTimeoutOption,
  outputOption,
} from "../options.js";
import { formatStatusJson, formatStatusText } from "../../report/format-status.js";
import { openSession, planSession, type SessionIo } from "../../reconcile/session.js";
import { writeRefreshedStatus } from "../../reconcile/status-write.js";
import { PlumbError } from "../../errors.js";
import { formatProblems } from "../../manifest/format/format.js";
import { processIo } from "../process-io.js";
import { refreshStatuses } from "../../reconcile/status-refresh.js";
import { withSeenNearby } from "../../status/applied-nearby.js";
import { takeObserverLock } from "../observer-lock.js";
import { forEachEnvironment } from "../environments.js";

type Flags = ConnectionFlags & {
  output: "text" | "json";
  lockTimeout?: number;
  env?: string[];
};

/** `plumb status [PATH]`: the status store, refreshed against live. */
export function statusCommand(io: SessionIo = processIo()): Command {
  const command = new Command("status")
    .description("Show each object's sync and health, refreshed against the control plane")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(outputOption(["text", "json"]))
    .addOption(lockTimeoutOption())
    .addOption(envOption());
  return addConnectionOptions(command, "also read the status committed to this branch").action(
    async (path: string, flags: Flags) => {
      // Once per environment (--env; docs/environments.md), each with its own store and lock.
      process.exitCode = await forEachEnvironment(
        path,
        flags,
        io,
        async (f, envIo) => {
          // Records are written only under the state lock (taken before the store is read), else not at all.
          const lock = await takeObserverLock(path, f, "plumb status", envIo.stderr);
          try {
            await runStatus(path, f, envIo, lock.writes);
            return 0;
          } finally {
            await lock.release();
          }
        },
        { eachAlone: true },
      );
    },
  );
}

async function runStatus(path: string, flags: Flags, io: SessionIo, writes: () => boolean): Promise<void> {
  const session = await openSession(path, flags, io);
  const result = await planSession(session, io, []);
  if (!result.ok) {
    io.stderr.write(`${formatProblems(result.problems)}\n`);
    throw new PlumbError(
      "invalid-manifests",
      "the manifests are invalid: fix them (plumb validate) to refresh status",
    );
  }
  const records = writes()
    ? await writeRefreshedStatus(session, result)
    : refreshStatuses({
        plan: result.plan,
        store: session.store,
        live: result.live.deployments,
        latestStatuses: new Map(),
        now: session.clock.now(),
      }).records;
  // Shown with what the stores above and below saw later (an apply of the tree, its checks).
  const shown = withSeenNearby(records, session.appliedNearby);
  const color = useColor(io);
  io.stdout.write(flags.output === "json" ? formatStatusJson(shown) : formatStatusText(shown, { color }));
  process.exitCode = 0;
}
