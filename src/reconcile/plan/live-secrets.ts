import type { SecretRedactor } from "../../api/secret-redactor.js";
import type { LiveState } from "../../diff/plan/build-plan.js";
import type { ChangeError, FieldChange, Plan, PlannedChange } from "../../diff/plan/plan-types.js";

// A server (hostile, compromised, or a proxy rewriting its answers) may put a secret of the run
// into a deployment's live fields: the API key as an image tag, a value sent in `secrets` as a
// repo_ref. plan, drift and the status page show live values, and drift --write writes them into
// git. So what a plan shows of live (each field's old value, its errors and warnings) has every
// secret the run knows redacted, whole forms only: a live URL is not cut because a secret also
// starts with `https://` (docs/security.md, "Live values"). Request bodies are git's, untouched.

const redactStrings = (value: unknown, redact: (text: string) => string): unknown => {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key), redactStrings(item, redact)]),
    );
  return value;
};

/** Whether a field's live value held a secret of the run (its shown value is redacted). */
export const liveHeldSecret = (field: FieldChange): boolean => field.live_redacted === true;

function hideInChange(change: PlannedChange, redact: (text: string) => string): PlannedChange {
  const messages = (list: ChangeError[]) => list.map((e) => ({ ...e, message: redact(e.message) }));
  const fields = change.fields?.map((field): FieldChange => {
    if (field.sensitive) return field; // names only
    const old = redactStrings(field.old, redact);
    return JSON.stringify(old) === JSON.stringify(field.old) ? field : { ...field, old, live_redacted: true };
  });
  return {
    ...change,
    errors: messages(change.errors),
    warnings: messages(change.warnings),
    ...(fields ? { fields } : {}),
  };
}

/** The plan as shown and kept: live values with the run's secrets redacted (see above). */
export function hideLiveSecrets(plan: Plan, redactor: SecretRedactor | undefined): Plan {
  if (!redactor) return plan;
  const redact = (text: string) => redactor.redactWhole(text);
  return { ...plan, changes: plan.changes.map((change) => hideInChange(change, redact)) };
}

/**
 * Live as shown whole (`plumb diff`'s YAML of it): every string with the run's secrets redacted,
 * whole forms only. For display: what plumb compares and sends is read from live unredacted.
 */
export function liveAsShown(live: LiveState, redactor: SecretRedactor): LiveState {
  const redact = (text: string) => redactor.redactWhole(text);
  return redactStrings(live, redact) as LiveState;
}
