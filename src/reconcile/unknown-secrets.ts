import type { DesiredObject } from "../diff/plan/build-plan.js";
import type { Deployment } from "../schema/deployment.js";
import { type ObjectStatus, statusKey } from "../status/status-types.js";

// With no status (a fresh clone without a published status branch, a new pod), plumb cannot tell
// whether secret values changed: the control plane never returns them. Every live deployment with
// secrets then gets them sent again, a new revision each. Counted here so the operator is told once.

/**
 * Names of live deployments whose manifest has secrets and whose record holds no fingerprints.
 * `live`: the listed deployments, or their names (the controller's startup listing keeps only those).
 */
export function findUnknownSecrets(
  desired: ReadonlyArray<{ loaded: DesiredObject["loaded"]; secrets?: readonly unknown[] | undefined }>,
  live: readonly Pick<Deployment, "name">[] | ReadonlySet<string>,
  record: (key: string) => ObjectStatus | undefined,
): string[] {
  const liveNames = "has" in live ? live : new Set(live.map((d) => d.name));
  return desired
    .filter(({ loaded, secrets }) => {
      const { kind, metadata } = loaded.manifest;
      return (
        kind === "Deployment" &&
        (secrets?.length ?? 0) > 0 &&
        liveNames.has(metadata.name) &&
        !record(statusKey(kind, metadata.name))?.secret_fingerprints
      );
    })
    .map(({ loaded }) => loaded.manifest.metadata.name);
}

/** The one warning line, or null when every secret's state is known. */
export function formatUnknownSecretsWarning(names: readonly string[], path: string): string | null {
  if (names.length === 0) return null;
  const some = names.length === 1 ? "1 live deployment has" : `${names.length} live deployments have`;
  return (
    `warning: ${some} secrets but no recorded fingerprints (in no status store here, above or below): their secrets will be ` +
    `sent again, a new revision each (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", ..." : ""}). ` +
    `To avoid it: pass --status-branch to read the published status, or if the live values equal the ` +
    `manifests', record them first with: plumb adopt ${path}`
  );
}
