import type { PlumbError } from "../errors.js";

/** What `-o json` prints of a failure: the error's code, message and fix, never a value. */
export type FailedRun = { code: string; message: string; fix?: string | undefined; exitCode: number };

/** A typed error as a failure: its fix when it carries one (an API error's hint). */
export function failedRunOf(error: PlumbError): FailedRun {
  const fix = "fix" in error && typeof error.fix === "string" ? error.fix : undefined;
  return { code: error.code, message: error.message, fix, exitCode: error.exitCode };
}

/**
 * The `error` object of a JSON document: `{code, message, fix, exit_code}`. `fix` is the error's
 * hint, or where docs/troubleshooting.md lists its fix. One shape wherever a failure is printed as
 * JSON: a failed command's document, and an environment's entry among others (`plan --env a --env
 * b -o json`), which had `code` and `message` only.
 */
export function errorObject(run: FailedRun): {
  code: string;
  message: string;
  fix: string;
  exit_code: number;
} {
  const fix = run.fix ?? `see "${run.code}" in docs/troubleshooting.md (Error codes)`;
  return { code: run.code, message: run.message, fix, exit_code: run.exitCode };
}

/**
 * A failed command's one JSON document on stdout, for a script that reads it: plan, drift, status,
 * apply and validate printed nothing there on an error before any output (an API error, settings
 * missing), so `jq` read an empty stream. The message is the one stderr gets (redacted at the API
 * client's edge).
 */
export function formatErrorJson(run: FailedRun): string {
  return `${JSON.stringify({ error: errorObject(run) }, null, 2)}\n`;
}
