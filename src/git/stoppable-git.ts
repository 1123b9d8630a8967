import { spawn } from "node:child_process";

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
      done(new Error(why));
    });
  });
}

/** After the stop, how long each git command over the network may still run (see GitStop). */
const AFTER_STOP_MS = 3_000;

/**
 * The controller's stop as its git commands over the network see it. A command running when the
 * controller is told to stop (a status publish, a lease renewal, a poll's fetch) ends at once: what
 * it did is done again or no longer needed. One started after (the last status publish, the lease's
 * release) may run AFTER_STOP_MS; once one of them ran out, the remote is taken as not answering
 * and every later one is refused at once, so a stalled remote costs the stop a few seconds, not a
 * minute per command (the stall limit, git-credentials.ts), past a pod's grace.
 */
export type GitStop = {
  /** The signal of a command starting now, and whether it is the after-stop bound. */
  commandSignal(): { signal: AbortSignal; bounded: boolean };
  /** A bounded command ran out: refuse the later ones. */
  ranOut(): void;
};

export function createGitStop(stopping: AbortSignal, afterStopMs = AFTER_STOP_MS): GitStop {
  let unanswered = false;
  return {
    commandSignal() {
      if (!stopping.aborted) return { signal: stopping, bounded: false };
      if (unanswered) return { signal: AbortSignal.abort(), bounded: false };
      return { signal: AbortSignal.timeout(afterStopMs), bounded: true };
    },
    ranOut: () => (unanswered = true),
  };
}

/** `git ARGS` over the network: stoppable when `stop` is given (the controller's), else as any git. */
export async function runNetworkGit(
  args: readonly string[],
  options: { cwd?: string | undefined; env: Record<string, string>; stop?: GitStop | undefined },
): Promise<string> {
  const run = options.stop?.commandSignal();
  try {
    return await runStoppableGit(args, { cwd: options.cwd, env: options.env, signal: run?.signal });
  } catch (error) {
    if (run?.bounded && run.signal.aborted) options.stop?.ranOut();
    throw error;
  }
}
