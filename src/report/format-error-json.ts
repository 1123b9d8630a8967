/** What `-o json` prints of a failure: the error's code, message and fix, never a value. */
export type FailedRun = { code: string; message: string; fix?: string | undefined; exitCode: number };

/**
 * A failed command's one JSON document on stdout, for a script that reads it: plan, drift, status,
 * apply and validate printed nothing there on an error before any output (an API error, settings
 * missing), so `jq` read an empty stream. The message is the one stderr gets (redacted at the API
 * client's edge); `fix` is the error's hint, or where docs/troubleshooting.md lists its fix.
 */
export function formatErrorJson(run: FailedRun): string {
  const fix = run.fix ?? `see "${run.code}" in docs/troubleshooting.md (Error codes)`;
  const error = { code: run.code, message: run.message, fix, exit_code: run.exitCode };
  return `${JSON.stringify({ error }, null, 2)}\n`;
}
