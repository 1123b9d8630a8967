import { escapeControls } from "../../manifest/format/format.js";
import type { ChangeError } from "./plan-types.js";

/**
 * One error or warning as a user reads it: `field: message`, or the message alone when it has no
 * field or already names it first (e.g. "source_config.repo_url cannot change…"), so the field is said once.
 */
export function formatChangeError(error: ChangeError): string {
  // One line: a message may quote a manifest's text (a file path) with a line break in it.
  const message = escapeControls(error.message);
  if (!error.field) return message;
  const named = message.startsWith(`${error.field} `) || message.startsWith(`${error.field}:`);
  return named ? message : `${error.field}: ${message}`;
}

/** Several errors on one line (apply summaries, status `last_error`). */
export const formatChangeErrors = (errors: readonly ChangeError[]): string =>
  errors.map(formatChangeError).join("; ");
