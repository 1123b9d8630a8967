// Text a server sends back may echo what it was sent (a 400 whose detail quotes the request body).
// The redactor of a run knows every secret value of that run and removes each from such text, in
// the forms a server may echo it in, before plumb stores, logs, prints, serves or commits it.
// One per run, injected (src/reconcile/session.ts, src/controller/api-clients.ts): no global state.

import { buildIndexes, type Indexes } from "./secret-redactor/form-index.js";
import { MIN_VALUE_LENGTH } from "./secret-redactor/redaction-limits.js";
import { redactWith } from "./secret-redactor/redact-text.js";
import { withoutUrlCredentials } from "./secret-redactor/url-credentials.js";

export { echoForms } from "./secret-redactor/echo-forms.js";
export { REDACTED } from "./secret-redactor/redaction-limits.js";

export type SecretRedactor = {
  /** Adds values to remove from now on (values already known, and short ones, are ignored). */
  add(values: Iterable<string | undefined>): void;
  /** The text with every known value, in every form, replaced by "[redacted]". */
  redact(text: string): string;
  /**
   * As redact, but a form found cut only from 16 characters, or where it ends the text: for a value
   * a server keeps (a live field), where text a secret starts with (`https://`) is no echo of it.
   */
  redactWhole(text: string): string;
};

/** A run's redactor; its index of forms is rebuilt on the first redaction after values were added. */
export function createSecretRedactor(initial: Iterable<string | undefined> = []): SecretRedactor {
  const values = new Set<string>();
  let index: Indexes | null = null;
  const redactor: SecretRedactor = {
    add(more) {
      for (const value of more) {
        if (value === undefined || value.length < MIN_VALUE_LENGTH || values.has(value)) continue;
        values.add(value);
        index = null;
      }
    },
    redact(text) {
      if (values.size === 0 || text.length < MIN_VALUE_LENGTH) return text;
      index ??= buildIndexes(values);
      return redactWith(index, text);
    },
    redactWhole(text) {
      const shown = withoutUrlCredentials(text);
      if (values.size === 0 || shown.length < MIN_VALUE_LENGTH) return shown;
      index ??= buildIndexes(values);
      return redactWith(index, shown, true);
    },
  };
  redactor.add(initial);
  return redactor;
}

/** The tokens plumb may be given in its environment; each is a secret of the run. */
const TOKEN_VARIABLES = [
  "PLUMB_API_KEY",
  "PLUMB_GIT_TOKEN",
  "PLUMB_STATUS_TOKEN",
  "PLUMB_WEBHOOK_SECRET",
  "PLUMB_NOTIFY_SECRET",
] as const;

/** The values of TOKEN_VARIABLES set in `env`. */
export const tokensOf = (env: NodeJS.ProcessEnv): Array<string | undefined> =>
  TOKEN_VARIABLES.map((name) => env[name]?.trim());
