import type { Logger } from "../../logger.js";
import { findUnknownSecrets } from "../../reconcile/unknown-secrets.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { Deployment } from "../../schema/deployment.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";

/** One warning at startup when secrets will be re-sent because no fingerprints are recorded (a new pod). */
export function warnUnknownSecrets(
  snapshot: DesiredSnapshot,
  live: ReadonlyMap<string, Deployment>,
  statuses: ReadonlyMap<string, ObjectStatus>,
  log: Logger,
): void {
  const desired = [...snapshot.objects.values()].map(({ loaded }) => ({
    loaded,
    secrets: loaded.manifest.kind === "Deployment" ? loaded.manifest.spec.secrets : undefined,
  }));
  const names = findUnknownSecrets(desired, [...live.values()], (key) => statuses.get(key));
  if (names.length === 0) return;
  log.warn(
    {
      deployments: names.length,
      names: names.slice(0, 20),
      fix: "keep status durable (--status-branch or a persistent --status-dir), or run plumb adopt once if live secrets equal the manifests'",
    },
    "no recorded secret fingerprints: these deployments' secrets will be sent again, a new revision each",
  );
}
