import type { DesiredObject } from "../diff/plan/build-plan.js";

/**
 * Environment variables that `valueFrom.env` secrets read and that are not set, each with the
 * secrets and deployments that need it: said once per variable instead of once per deployment.
 */
export type MissingEnv = { variable: string; secrets: string[]; deployments: string[] };

export function findMissingEnv(desired: readonly DesiredObject[], env: NodeJS.ProcessEnv): MissingEnv[] {
  const byVariable = new Map<string, MissingEnv>();
  for (const { loaded } of desired) {
    if (loaded.manifest.kind !== "Deployment") continue;
    for (const secret of loaded.manifest.spec.secrets ?? []) {
      const from = secret.valueFrom;
      if (!from || !("env" in from) || (env[from.env] ?? "") !== "") continue;
      const entry = byVariable.get(from.env) ?? { variable: from.env, secrets: [], deployments: [] };
      if (!entry.secrets.includes(secret.name)) entry.secrets.push(secret.name);
      if (!entry.deployments.includes(loaded.manifest.metadata.name))
        entry.deployments.push(loaded.manifest.metadata.name);
      byVariable.set(from.env, entry);
    }
  }
  return [...byVariable.values()].sort((a, b) => a.variable.localeCompare(b.variable));
}

/** `env variable OPENAI_API_KEY not set: secret OPENAI_API_KEY of a, b (2 deployments not planned)`. */
export function formatMissingEnv(missing: readonly MissingEnv[]): string[] {
  return missing.map(({ variable, secrets, deployments }) => {
    const names = [...deployments].sort();
    const shown =
      names.length > 10 ? `${names.slice(0, 10).join(", ")} and ${names.length - 10} more` : names.join(", ");
    const count = names.length === 1 ? "1 deployment" : `${names.length} deployments`;
    return `env variable ${variable} not set: secret ${secrets.join(", ")} of ${shown} (${count} not planned until it is set)`;
  });
}
