import { PlumbError } from "../errors.js";

/** One line for a log field: the message, plus our error code when it is a PlumbError. */
export function errorMessage(error: unknown): string {
  if (error instanceof PlumbError) return `${error.message} [${error.code}]`;
  return error instanceof Error ? error.message : String(error);
}
