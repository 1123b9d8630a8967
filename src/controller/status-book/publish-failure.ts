import type { Logger } from "../../logger.js";
import { resolveStatusDir, type StatusLocation } from "../../git/status/status-source.js";
import { errorMessage } from "../error-message.js";
import { type GitStop, GitStopped } from "../../git/stoppable-git.js";
import { lapsedWhileStopping } from "../../lock/index.js";

// Why the status book did not publish to the status branch (status-book.ts).

/** What `check` threw (undefined when it returned). */
export function failureOf(check: () => void): unknown {
  try {
    check();
    return undefined;
  } catch (error) {
    return error ?? new Error("failed");
  }
}

/**
 * Told to stop, the controller could not publish because the git remote stopped answering: the lease
 * lapsed for it (lapsedWhileStopping), or a push ran out after the stop (GitStopped). Not a lock
 * lost: no one took it, and the last status is in the status directory (sayNotPublished).
 */
const unansweredAtStop = (error: unknown, gitStop: GitStop | undefined): boolean =>
  lapsedWhileStopping(error, gitStop) ||
  (gitStop?.signal.aborted === true &&
    gitStop.unanswered &&
    (error instanceof GitStopped || (error instanceof Error && error.cause instanceof GitStopped)));

/** Why a publish was not made: by the lock's fence before it, or at its push (git's failure or the fence's). */
export function sayNotPublished(
  log: Logger,
  location: StatusLocation,
  error: unknown,
  at: "fence" | "push",
): void {
  if (unansweredAtStop(error, location.gitStop))
    log.warn(
      { status_dir: resolveStatusDir(location) },
      "status branch not published: the git remote did not answer after the stop; the last status is in the status directory",
    );
  else if (at === "fence") log.warn({}, "lost the state lock: status branch not published");
  else log.error({ err: errorMessage(error) }, "status branch not published");
}
