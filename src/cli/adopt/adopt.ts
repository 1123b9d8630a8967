import { Command } from "commander";
import { PlumbError } from "../../errors.js";
import { shown } from "./import-live.js";
import { adoptKey, buildAdoptedRecord, decideAdoption } from "../../reconcile/adopt.js";
import { gitCommitOf, openSession, planSession } from "../../reconcile/session.js";
import { manifestDirOf, ownRecordsIn, publishStatus } from "../../git/status/status-source.js";
import { manifestRootOf } from "../../status/manifest-root.js";
import { checkStatusDirWritable } from "../../status/status-store.js";
import { askOnTerminal, type ApplyIo } from "../sync/apply.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  lockTimeoutOption,
  outputOption,
  targetOption,
  envOption,
} from "../options.js";
import { processIo } from "../process-io.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { withStateLock } from "../with-state-lock.js";
import { forEachEnvironment } from "../environments.js";
import type { StateLock } from "../../lock/index.js";

type Flags = ConnectionFlags & {
  target: string[];
  yes?: boolean;
  output: "text" | "json";
  lockTimeout?: number;
  env?: string[];
};

/** `plumb adopt [PATH]`: record live deployments as applied with the manifests' current secrets; sends nothing. */
export function adoptCommand(io: ApplyIo = processIo()): Command {
  const command = new Command("adopt")
    .description(
      "Record deployments that already exist live as applied with the manifests' current secret values, sending nothing (you assert live secrets equal the manifests')",
    )
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(targetOption("adopt only this object"))
    .option("-y, --yes", "record without asking (required when not on a terminal)")
    .addOption(lockTimeoutOption())
    .addOption(outputOption(["text", "json"]))
    .addOption(envOption());
  return addConnectionOptions(command, "also commit the records to this branch and push").action(
    async (path: string, flags: Flags) => {
      // Once per environment (--env; docs/environments.md), each under its own state lock.
      process.exitCode = await forEachEnvironment(path, flags, io, (f, envIo) =>
        runAdopt(path, f, { ...io, ...envIo }),
      );
    },
  );
}

export const runAdopt = (path: string, flags: Flags, io: ApplyIo): Promise<number> =>
  withStateLock(path, flags, "plumb adopt", (lock) => adoptLocked(path, flags, io, lock), {
    say: (line) => void io.stderr.write(`plumb: ${line}\n`),
  });

async function adoptLocked(
  path: string,
  flags: Flags,
  io: ApplyIo,
  lock: Pick<StateLock, "assertHeld" | "pushFence">,
): Promise<number> {
  const session = await openSession(path, flags, io);
  await checkStatusDirWritable(session.statusDir);
  const result = await planSession(session, io, flags.target);
  if (!result.ok) {
    reportInvalidManifests(io.stdout, result.problems, flags.output, "nothing recorded");
    return 1;
  }
  const decisions = decideAdoption(result.desired, result.plan.changes, result.live);
  const adoptable = decisions.filter((d) => d.adopt);
  const log = flags.output === "json" ? io.stderr : io.stdout;
  for (const d of decisions)
    log.write(
      d.adopt
        ? `adopt: Deployment ${d.name} (${shown(d.live.id)}), ${d.desired.secrets?.length ?? 0} secrets\n`
        : `skip:  ${d.name}: ${d.reason}\n`,
    );
  if (adoptable.length > 0 && !flags.yes) {
    if (!io.confirm && !io.stdin?.isTTY)
      throw new PlumbError(
        "adopt-needs-confirmation",
        "not on a terminal, so plumb cannot ask: check that the live secret values equal the manifests', then run again with --yes",
      );
    const question = `\nRecord ${adoptable.length} deployment(s) as applied with the manifests' current secret values? Only 'yes' will be accepted: `;
    if (!(await (io.confirm ?? askOnTerminal)(question))) {
      log.write("Adopt cancelled: nothing was recorded.\n");
      return 1;
    }
  }
  const gitCommit = await gitCommitOf(path);
  const recorded = [];
  const store = ownRecordsIn(session.statusDir, manifestRootOf(manifestDirOf(session.root)));
  for (const d of adoptable) {
    const record = await buildAdoptedRecord(
      d,
      session.store.objects.get(adoptKey(d.name)),
      gitCommit,
      session.clock.now(),
    );
    lock.assertHeld(); // a lock lost meanwhile (forced): nothing more is recorded
    await store.saveOwnObjectStatus(record);
    recorded.push({
      name: d.name,
      id: record.id,
      secrets: Object.keys(record.secret_fingerprints?.values ?? {}).length,
    });
  }
  const published = await publishStatus(
    session.location,
    `plumb adopt: ${recorded.length} recorded`,
    lock.pushFence,
  );
  if (published?.commit)
    log.write(`Status committed to branch ${published.branch} (${published.commit.slice(0, 12)}).\n`);
  const skipped = decisions.filter((d) => !d.adopt).map((d) => ({ name: d.name, reason: d.reason }));
  if (flags.output === "json")
    io.stdout.write(`${JSON.stringify({ format_version: "1", recorded, skipped }, null, 2)}\n`);
  else
    io.stdout.write(
      `Adopt complete: ${recorded.length} recorded, ${skipped.length} skipped; nothing was sent.\n`,
    );
  const refused = decisions.some((d) => !d.adopt && d.reason.startsWith("does not exist live"));
  return refused ? 1 : 0;
}
