import type { SessionIo } from "../reconcile/session.js";

/** The commands' I/O when run for real: this process's streams and environment (tests inject their own). */
export const processIo = (): SessionIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

/**
 * A reader that went away (`plumb --help | head -1`, `plumb plan | head`) is no error: the pipe
 * breaks (EPIPE), the stream closes, what is left of the output is dropped without a word, and
 * the command ends with its own exit code (0 for help, a plan, a validation without errors). An
 * apply is never cut half-way by it. Any other write error still ends the process loudly.
 */
export function dropOutputOnBrokenPipe(streams: readonly NodeJS.WriteStream[]): void {
  for (const stream of streams)
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
}
