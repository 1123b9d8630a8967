import { Command } from "commander";
import { PlumbError } from "../../errors.js";
import {
  committedStateLock,
  describeHolder,
  forceUnlock,
  lockTargetOf,
  readStateLock,
} from "../../lock/index.js";
import type { SessionIo } from "../../reconcile/session.js";
import { processIo } from "../process-io.js";
import { forEachEnvironment } from "../environments.js";
import { envOption } from "../options.js";
import { loadManifestsOnce } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { sortProblems } from "../../manifest/validate.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";

type Flags = {
  force?: boolean;
  statusDir?: string;
  statusBranch?: string;
  env?: string[];
  environment?: string;
};

/** `plumb unlock [PATH] [--force]`: shows who holds the state lock; --force ends it (docs/status.md). */
export function unlockCommand(io: SessionIo = processIo()): Command {
  return new Command("unlock")
    .description(
      "Show who holds the state lock of a status store; with --force remove it (only when that process is gone)",
    )
    .argument("[path]", "directory (or file) of manifests", ".")
    .option("--force", "end the lock whoever holds it (its holder stops; free after its lease)")
    .option("--status-dir <dir>", "status store (default PATH/.plumb/status)")
    .option("--status-branch <branch>", "also the lease of this status branch in the git remote")
    .addOption(envOption())
    .action(async (path: string, flags: Flags) => {
      // With --env, one parse for the check below and forEachEnvironment's selection (without, its
      // quick scan for Environment documents stays).
      const unlockIo: SessionIo = flags.env?.length
        ? { ...io, manifestLoads: io.manifestLoads ?? new Map() }
        : io;
      if (await refuseInvalidEnvironment(path, flags, unlockIo)) {
        process.exitCode = 1;
        return;
      }
      // Each environment's own store (--env; docs/environments.md), else the one store.
      process.exitCode = await forEachEnvironment(
        path,
        flags,
        unlockIo,
        (f, envIo) => runUnlock(path, f, envIo),
        { connects: false },
      );
    });
}

/**
 * An Environment document that failed validation is not among those defined: --env naming it said
 * "unknown environment", hiding the typo. Its files' problems are printed instead (as plan,
 * validate and render do); a tree with broken Deployments is still unlocked (unlock reads none).
 */
async function refuseInvalidEnvironment(path: string, flags: Flags, io: SessionIo): Promise<boolean> {
  if (!flags.env?.length) return false;
  const tree = await loadManifestsOnce(io.manifestLoads, path, {
    maxBytes: maxManifestBytesFrom(io.env),
    environmentsAbove: true,
    environmentRequested: true, // (with --env only), as forEachEnvironment then loads it
  });
  const defined = new Set(tree.environments?.map((e) => e.manifest.metadata.name));
  if (!tree.problems.some((p) => p.severity === "error") || flags.env.every((n) => defined.has(n)))
    return false;
  reportInvalidManifests(io.stdout, sortProblems(tree.problems), "text", "nothing unlocked");
  return true;
}

export async function runUnlock(path: string, flags: Flags, io: Pick<SessionIo, "stdout">): Promise<number> {
  const target = lockTargetOf({
    root: path,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    environment: flags.environment,
  });
  // A lock committed to git names no running process: not a holder, and said (committed-lock.ts).
  const committed = await committedStateLock(target);
  const unlocked = `The status store ${target.statusDir} is not locked${committed ? ` (${committed})` : ""}.\n`;
  if (!flags.force) {
    const holder = await readStateLock(target);
    if (!holder) {
      io.stdout.write(unlocked);
      return 0;
    }
    if (holder.forced) {
      io.stdout.write(
        `The state lock of ${target.statusDir}, held by ${describeHolder(holder)}, was ended by plumb unlock --force: the next writer takes the store once it has gone a whole lease unrenewed (pass --lock-timeout to wait for it).\n`,
      );
      return 0;
    }
    throw new PlumbError(
      "state-locked",
      `the status store ${target.statusDir} is held by ${describeHolder(holder)}; if that process is gone, run plumb unlock --force`,
    );
  }
  const holder = await forceUnlock(target);
  io.stdout.write(
    holder
      ? `Ended the state lock of ${target.statusDir}, held by ${describeHolder(holder)}: if that process still runs, it stops at its next renewal; the next writer takes the store once the lock went a whole lease unrenewed (at once when that process is gone from this host).\n`
      : unlocked.replace(" is not locked", " was not locked"),
  );
  return 0;
}
