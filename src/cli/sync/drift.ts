import { useColor } from "../color.js";
import { Command } from "commander";
import {
  addConnectionOptions,
  type ConnectionFlags,
  lockTimeoutOption,
  outputOption,
  targetOption,
  envOption,
} from "../options.js";
import { buildDriftReport } from "../../reconcile/drift.js";
import { writeDriftEdits } from "../../reconcile/drift-write.js";
import { loadEnvironmentWrite } from "../../reconcile/drift-write-environment.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { formatDriftJson, formatDriftMarkdown, formatDriftText } from "../../report/format-drift.js";
import { openSession, planSession, type SessionIo } from "../../reconcile/session.js";
import { asError } from "../../errors.js";
import { publishStatus } from "../../git/status/status-source.js";
import type { PushFence } from "../../git/fenced-push.js";
import { writeRefreshedStatus } from "../../reconcile/status-write.js";
import { processIo } from "../process-io.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { takeObserverLock } from "../observer-lock.js";
import { forEachEnvironment } from "../environments.js";

type Flags = ConnectionFlags & {
  output: "text" | "json" | "markdown";
  target: string[];
  write?: boolean;
  failOnPending?: boolean;
  lockTimeout?: number;
  env?: string[];
  /** Set by forEachEnvironment: the environment this run checks. */
  environment?: string;
};

/**
 * `plumb drift [PATH]`: live compared with git, nothing changed; exit 0 in sync or only pending
 * changes (git moved since the last apply), 2 drift or conflict (or pending with --fail-on-pending),
 * 1 error.
 */
export function driftCommand(io: SessionIo = processIo()): Command {
  const command = new Command("drift")
    .description(
      "Report where the control plane differs from git (exit 0 in sync or only changes pending in git, 2 drift or conflict, 1 error)",
    )
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(outputOption(["text", "json", "markdown"]))
    .addOption(targetOption("check only this object"))
    .addOption(lockTimeoutOption())
    .addOption(envOption())
    .option(
      "--fail-on-pending",
      "exit 2 also when git has changes not applied yet (pending), not only on drift or conflicts",
    )
    .option(
      "--write",
      "edit the manifests so they match live for every drifted field they manage (not secrets nor immutable fields), keeping every other byte",
    );
  return addConnectionOptions(command, "also read and commit the status on this branch").action(
    async (path: string, flags: Flags) => {
      // Once per environment (--env; docs/environments.md): 1 if any failed, else 2 if any drifted.
      process.exitCode = await forEachEnvironment(path, flags, io, (f, envIo) => runDrift(path, f, envIo), {
        eachAlone: true,
      });
    },
  );
}

export async function runDrift(path: string, flags: Flags, io: SessionIo): Promise<number> {
  // Records are written only under the state lock (taken before the store is read), else not at all.
  const lock = await takeObserverLock(path, flags, "plumb drift", io.stderr);
  try {
    return await driftLocked(path, flags, io, lock.writes, lock.pushFence);
  } finally {
    await lock.release();
  }
}

async function driftLocked(
  path: string,
  flags: Flags,
  io: SessionIo,
  writes: () => boolean,
  pushFence?: PushFence,
): Promise<number> {
  const session = await openSession(path, flags, io);
  // An empty PATH is a mistake unless the status store remembers objects: then they were removed from git.
  const requireManifests = session.store.objects.size === 0;
  const result = await planSession(session, io, flags.target, undefined, { requireManifests });
  if (!result.ok) {
    reportInvalidManifests(io.stdout, result.problems, flags.output, "drift not checked");
    return 1;
  }
  // With --target the store is narrowed to the targets, so other records are not reported as removed.
  const store = flags.target.length
    ? {
        ...session.store,
        objects: new Map([...session.store.objects].filter(([, s]) => flags.target.includes(s.name))),
      }
    : session.store;
  const report = buildDriftReport(result.plan, store, result.live.deployments);
  if (writes()) await writeRefreshedStatus(session, { ...result, store });
  // The report is printed even when the status branch cannot be pushed; that error comes after it.
  const publishError = writes()
    ? await publishStatus(
        session.location,
        `plumb drift: ${report.drifted ? "drift" : report.in_sync ? "in sync" : "pending changes"}`,
        pushFence,
      ).then(
        () => null,
        (error: unknown) => asError(error),
      )
    : null;
  const color = useColor(io);
  if (flags.write) {
    // Progress on stderr when stdout carries JSON; the report below still says what differed.
    const log = flags.output === "json" ? io.stderr : io.stdout;
    // With environments, each value goes into the layer that keeps every other environment as it is.
    const environment =
      flags.environment === undefined
        ? undefined
        : await loadEnvironmentWrite(path, flags.environment, maxManifestBytesFrom(io.env), true);
    const { written, kept } = await writeDriftEdits(result.root, report, environment);
    for (const w of written)
      log.write(
        `wrote ${w.file}:${w.line} ${w.name} ${w.field}: ${JSON.stringify(w.from)} → ${JSON.stringify(w.to)}${w.into ? ` (into ${w.into})` : ""}\n`,
      );
    for (const k of kept) log.write(`kept  ${k.file} ${k.name} ${k.field}: ${k.reason}\n`);
    if (written.length > 0)
      log.write(`drift --write: ${written.length} field(s) written; review and commit them.\n\n`);
  }
  io.stdout.write(
    flags.output === "json"
      ? formatDriftJson(report)
      : flags.output === "markdown"
        ? formatDriftMarkdown(report)
        : formatDriftText(report, { color }),
  );
  if (publishError) throw publishError;
  // An object an error kept from being checked is an error (1), as plan says for the same refusal.
  if (report.not_checked.length > 0) return 1;
  return report.drifted || (flags.failOnPending && !report.in_sync) ? 2 : 0;
}
