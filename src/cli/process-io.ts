import type { SessionIo } from "../reconcile/session.js";

/** The commands' I/O when run for real: this process's streams and environment (tests inject their own). */
export const processIo = (): SessionIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
