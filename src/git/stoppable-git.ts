import { spawn } from "node:child_process";

// The controller's git commands over the network (the first clone of --repo, each poll's fetch),
// stoppable. simple-git's `abort` killed the git process only: the HTTP helper git had started
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

/** Runs `git ARGS`; rejects with git's own message, or "stopped" once `signal` aborted. */
export function runStoppableGit(args: readonly string[], options: StoppableGit): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(new Error("stopped"));
  // A group of its own (not on Windows, which has none): its pid is the group's id.
  const group = process.platform !== "win32";
  const child = spawn("git", args, {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: options.env,
    stdio: ["ignore", "ignore", "pipe"],
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
  child.stderr.on(
    "data",
    (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEPT)),
  );
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      signal?.removeEventListener("abort", stop);
      clearTimeout(killer);
      if (error) reject(error);
      else resolve();
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
