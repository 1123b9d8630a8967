import { type IOType, spawn, spawnSync } from "node:child_process";
import { redactGitText } from "./git-credentials.js";

// The controller's git commands over the network (the first clone of --repo, each poll's fetch,
// the status branch's ls-remote, clone, fetch and push, the lease's), stoppable. simple-git's `abort` killed the git process only: the HTTP helper git had started
// (git-remote-http, waiting on a server that said nothing) lived on, holding the pipes of the
// command's output, so a controller told to stop (SIGTERM) logged that it stopped and then exited
// only when that helper gave up: a minute later (the stall limit, git-credentials.ts), past
// Kubernetes' grace. Here git runs in a process group of its own, and stopping ends the whole
// group: git and every helper it started.

export type StoppableGit = {
  /** Where git runs (default this process's directory). */
  cwd?: string | undefined;
  /** git's whole environment (credentials: git-credentials.ts). */
  env: Record<string, string>;
  /** Ends the command and every git process it started. */
  signal?: AbortSignal | undefined;
};

/** After SIGTERM, how long git has to clean up (a partial clone) before the group is killed. */
const KILL_AFTER_MS = 2_000;
/** The end of git's stderr kept for the error (it says why in its last lines). */
const STDERR_KEPT = 8 * 1024;

/** Runs `git ARGS`; resolves with its output, rejects with git's own message, or "stopped" once `signal` aborted. */
export function runStoppableGit(args: readonly string[], options: StoppableGit): Promise<string> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(new Error("stopped"));
  // A group of its own (not on Windows, which has none): its pid is the group's id.
  const group = process.platform !== "win32";
  const child = spawn("git", args, {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: group,
  });
  const end = (how: NodeJS.Signals) => {
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, how);
      else child.kill(how);
    } catch {
      // already gone
    }
  };
  let killer: NodeJS.Timeout | undefined;
  const stop = () => {
    end("SIGTERM");
    killer = setTimeout(() => end("SIGKILL"), KILL_AFTER_MS);
  };
  signal?.addEventListener("abort", stop, { once: true });
  let stderr = "";
  const stdout: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on(
    "data",
    (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEPT)),
  );
  return new Promise<string>((resolve, reject) => {
    const done = (error?: Error) => {
      signal?.removeEventListener("abort", stop);
      clearTimeout(killer);
      if (error) reject(error);
      else resolve(Buffer.concat(stdout).toString("utf8"));
    };
    child.once("error", (error) => done(error));
    // "close": git and every helper that shared its stderr are gone.
    child.once("close", (code, how) => {
      if (code === 0) return done();
      const why = signal?.aborted ? "stopped" : stderr.trim() || `git exited with ${code ?? how}`;
      // Whoever shows it (logs, /status, a notification) gets it without the credentials.
      done(new Error(redactGitText(why, options.env, args)));
    });
  });
}

/** After the stop, how long each git command over the network may still run (see GitStop). */
const AFTER_STOP_MS = 3_000;

/**
 * The controller's stop as its git commands over the network see it. Once the controller is told
 * to stop, a command may run AFTER_STOP_MS more: one running then (a status publish, a lease
 * renewal: a healthy remote finishes it, so a push that landed is not cut off unknown), and each
 * started after (the last status publish, the lease's release). Once one of them ran out, the
 * remote is taken as not answering and every later one is refused at once: a stalled remote costs
 * the stop a few seconds, not a minute per command (the stall limit, git-credentials.ts), past a
 * pod's grace.
 */
export type GitStop = {
  /** Aborted when the controller is told to stop. */
  readonly signal: AbortSignal;
  readonly afterStopMs: number;
  /** A command ran out after the stop: later ones are not tried. */
  unanswered: boolean;
};

export const createGitStop = (signal: AbortSignal, afterStopMs = AFTER_STOP_MS): GitStop => ({
  signal,
  afterStopMs,
  unanswered: false,
});

/** A git command the controller's stop ended or did not start: no credentials or remote to fix. */
export class GitStopped extends Error {}

/** `git ARGS` over the network: stoppable when `stop` is given (the controller's), else as any git. */
export async function runNetworkGit(
  args: readonly string[],
  options: { cwd?: string | undefined; env: Record<string, string>; stop?: GitStop | undefined },
): Promise<string> {
  const { stop } = options;
  const run = { cwd: options.cwd, env: options.env };
  if (!stop) return runStoppableGit(args, run);
  const seconds = stop.afterStopMs / 1000;
  if (stop.signal.aborted && stop.unanswered)
    throw new GitStopped(`not tried: the controller is stopping and the git remote did not answer`);
  const bound = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const startBound = () => (timer = setTimeout(() => bound.abort(), stop.afterStopMs));
  if (stop.signal.aborted) startBound();
  else stop.signal.addEventListener("abort", startBound, { once: true });
  try {
    return await runStoppableGit(args, { ...run, signal: bound.signal });
  } catch (error) {
    if (!bound.signal.aborted) throw error;
    stop.unanswered = true;
    throw new GitStopped(
      `stopped: the git remote did not answer within ${seconds} s of the controller's stop`,
      {
        cause: error,
      },
    );
  } finally {
    stop.signal.removeEventListener("abort", startBound);
    clearTimeout(timer);
  }
}

/**
 * `git ARGS` run synchronously (the lease's renewal on the spot, src/lock/branch/renewal.ts renewNow: nothing
 * is sent before it answers), in a process group of its own, as runNetworkGit's. spawnSync ends
 * git alone at its timeout and returns: git's HTTP helper (git-remote-http), waiting on a remote
 * that says nothing, lived on past it up to the stall limit. git itself ends at the timeout with
 * SIGTERM (its own clean-up, which spawnSync waits for); what is left of its group then (the helper,
 * nothing to clean up) is killed before this returns. After the controller's stop (`stop`) it runs
 * at most afterStopMs, and not at all once a command ran out after the stop (GitStop).
 */
export function runNetworkGitSync(
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; stop?: GitStop | undefined },
): string {
  const { stop } = options;
  let timeoutMs = options.timeoutMs;
  if (stop?.signal.aborted) {
    if (stop.unanswered)
      throw new GitStopped(`not tried: the controller is stopping and the git remote did not answer`);
    timeoutMs = Math.min(timeoutMs, stop.afterStopMs);
  }
  const group = process.platform !== "win32";
  const settings = {
    cwd: options.cwd,
    env: options.env,
    timeout: Math.max(1, Math.floor(timeoutMs)),
    stdio: ["ignore", "pipe", "pipe"] as IOType[],
    encoding: "utf8" as const,
    // spawnSync reads `detached` as spawn does (a group whose id is git's pid), though Node's types
    // leave it out; the renewal test (branch-lease-renew-now.test.ts) fails without the group.
    detached: group,
  };
  const ran = spawnSync("git", args, settings);
  if (group && ran.pid) {
    try {
      process.kill(-ran.pid, "SIGKILL");
    } catch {
      // the group is gone: nothing git started outlived it
    }
  }
  if (ran.status === 0) return ran.stdout.trim();
  const failed: NodeJS.ErrnoException | undefined = ran.error;
  const timedOut = failed?.code === "ETIMEDOUT";
  if (timedOut && stop?.signal.aborted) {
    stop.unanswered = true;
    throw new GitStopped(
      `stopped: the git remote did not answer within ${stop.afterStopMs / 1000} s of the controller's stop`,
    );
  }
  if (timedOut) throw new Error(`git did not answer within ${Math.round(timeoutMs)} ms`);
  if (failed) throw failed;
  throw new Error(
    redactGitText(ran.stderr.trim() || `git exited with ${ran.status ?? ran.signal}`, options.env, args),
  );
}
