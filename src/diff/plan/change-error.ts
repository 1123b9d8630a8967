import type { ChangeError } from "./plan-types.js";

/**
 * One error or warning as a user reads it: `field: message`, or the message alone when it has no
 * field or already names it first (e.g. "source_config.repo_url cannot change…"), so the field is said once.
 */
export function formatChangeError(error: ChangeError): string {
  if (!error.field) return error.message;
  const named = error.message.startsWith(`${error.field} `) || error.message.startsWith(`${error.field}:`);
  return named ? error.message : `${error.field}: ${error.message}`;
}

/** Several errors on one line (apply summaries, status `last_error`). */
export const formatChangeErrors = (errors: readonly ChangeError[]): string =>
  errors.map(formatChangeError).join("; ");
