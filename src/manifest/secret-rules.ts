import { isRecord, leavesRoot, present, type Raw, records, type Report } from "./rule-helpers.js";

/** Secrets: unique names (with secret_references), exactly one of value / valueFrom, files inside the root. */
export function checkSecrets(spec: Raw, file: string, report: Report): void {
  const seen = new Set<string>();
  const all = [
    ...records(spec.secrets).map((s, i) => ({ s, path: ["spec", "secrets", i] })),
    ...records(spec.secret_references).map((s, i) => ({ s, path: ["spec", "secret_references", i] })),
  ];
  for (const { s, path } of all) {
    if (typeof s.name !== "string") continue;
    if (seen.has(s.name)) {
      report(
        "error",
        "duplicate-secret",
        [...path, "name"],
        `secret ${s.name} is defined more than once`,
        "value",
      );
    }
    seen.add(s.name);
  }
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
    if (isRecord(from) && typeof from.file === "string") {
      if (leavesRoot(file, from.file)) {
        report(
          "error",
          "secret-file-outside-root",
          [...path, "valueFrom", "file"],
          `secret file ${from.file} is outside the manifest root`,
          "value",
        );
      }
    }
  });
}
