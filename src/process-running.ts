// Whether a process of this host (this PID namespace) runs: what tells a later run that the maker
// of a temp file or worktree (its pid in the name) is gone. Signal 0 checks without signalling;
// EPERM means it runs as another user. A pid reused since is judged running: callers that must not
// keep a leftover for ever also bound it by age.

export function processRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
