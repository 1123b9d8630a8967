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
      // Each environment's own store (--env; docs/environments.md), else the one store.
      process.exitCode = await forEachEnvironment(path, flags, io, (f, envIo) => runUnlock(path, f, envIo), {
        connects: false,
      });
    });
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
