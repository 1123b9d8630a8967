import {
  isRecord,
  leavesRoot,
  present,
  type Raw,
  records,
  type Report,
  reportDuplicateNames,
} from "./rule-helpers.js";

/**
 * plumb's own credentials (the API key, the git token, the status, webhook and notification
 * secrets): never a deployment's secret. Named in a manifest, they went to the deployment, where
 * its code reads them: whoever merges a manifest into the branch a controller follows got the
 * controller's keys (git write access past review, the API key). secrets.ts refuses them too.
 */
export const PLUMB_CREDENTIAL_VARIABLES: ReadonlySet<string> = new Set([
  "PLUMB_API_KEY",
  "PLUMB_GIT_TOKEN",
  "PLUMB_STATUS_TOKEN",
  "PLUMB_WEBHOOK_SECRET",
  "PLUMB_NOTIFY_SECRET",
]);

/** The message for a secret naming one of PLUMB_CREDENTIAL_VARIABLES. */
export const plumbCredentialMessage = (variable: string): string =>
  `${variable} is one of plumb's own credentials and is never sent to a deployment; give the deployment its own variable (e.g. export LANGSMITH_API_KEY where plumb runs) and name that`;

/** True when a path written in a manifest goes through a `.git` entry (secrets.ts checks the real path). */
const inGitDirectory = (target: string): boolean => target.split(/[\\/]/).includes(".git");

/** Secrets: unique names (with secret_references), exactly one of value / valueFrom, files inside the root. */
export function checkSecrets(spec: Raw, file: string, report: Report): void {
  reportDuplicateNames(report, "duplicate-secret", "secret", [
    ...records(spec.secrets).map((s, i) => ({ name: s.name, path: ["spec", "secrets", i] })),
    ...records(spec.secret_references).map((s, i) => ({
      name: s.name,
      path: ["spec", "secret_references", i],
    })),
  ]);
  records(spec.secrets).forEach((secret, i) => {
    const path = ["spec", "secrets", i];
    const hasValue = typeof secret.value === "string" && secret.value !== "";
    const from = secret.valueFrom;
    if (hasValue && present(from)) {
      report(
        "error",
        "secret-value-conflict",
        [...path, "valueFrom"],
        "a secret takes value or valueFrom, not both",
      );
    } else if (!hasValue && !present(from)) {
      const message =
        secret.value === ""
          ? "secret value is empty; use valueFrom or a non-empty value"
          : "secret needs value or valueFrom";
      report("error", "secret-value-missing", secret.value === "" ? [...path, "value"] : path, message);
    }
    if (isRecord(from) && typeof from.env === "string" && PLUMB_CREDENTIAL_VARIABLES.has(from.env))
      report(
        "error",
        "secret-env-credential",
        [...path, "valueFrom", "env"],
        plumbCredentialMessage(from.env),
      );
    if (isRecord(from) && typeof from.file === "string") {
      if (leavesRoot(file, from.file)) {
        report(
          "error",
          "secret-file-outside-root",
          [...path, "valueFrom", "file"],
          `secret file ${from.file} is outside the manifest root`,
          "value",
        );
      } else if (inGitDirectory(from.file)) {
        report(
          "error",
          "secret-file-in-git",
          [...path, "valueFrom", "file"],
          `secret file ${from.file} is inside a .git directory (repository metadata, e.g. a CI token in .git/config); keep the secret in a file of its own`,
          "value",
        );
      }
    }
  });
}

/** From this length a literal secret's value is looked for inside other text; shorter ones only as a whole value. */
const CONTAINED_FROM = 8;

/**
 * A literal secret's value written again outside `spec.secrets` (an alias `*lit` of its anchor, or
 * a copy): that field is no secret. apply sends it in the clear, where the control plane shows it
 * to anyone who can read the deployment, and render prints it. Refused at the field, naming the
 * secret and never its value. Values under 4 characters are not looked for (the redactor's floor).
 */
export function checkSecretReuse(document: Raw, report: Report): void {
  const spec = isRecord(document.spec) ? document.spec : {};
  const literals = records(spec.secrets).flatMap((secret) =>
    typeof secret.value === "string" && secret.value.length >= 4
      ? [{ name: String(secret.name), value: secret.value }]
      : [],
  );
  if (literals.length === 0) return;
  const visit = (node: unknown, path: Array<string | number>): void => {
    if (path.length === 2 && path[0] === "spec" && path[1] === "secrets") return;
    if (typeof node === "string") {
      const found = literals.find(({ value }) =>
        value.length >= CONTAINED_FROM ? node.includes(value) : node === value,
      );
      if (found)
        report(
          "error",
          "secret-value-reused",
          path,
          `holds the value of secret ${found.name} (an alias of it, or a copy): this field is sent and shown in the clear; read the value from the secret's variable in the agent, or give the secret valueFrom`,
          "value",
        );
    } else if (Array.isArray(node)) node.forEach((item, i) => visit(item, [...path, i]));
    else if (isRecord(node)) for (const [key, value] of Object.entries(node)) visit(value, [...path, key]);
  };
  visit(document, []);
}
