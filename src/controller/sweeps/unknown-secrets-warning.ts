import type { Logger } from "../../logger.js";
import { findUnknownSecrets } from "../../reconcile/unknown-secrets.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";

/**
 * Deployments of the snapshot with secrets among `live` (names) whose record holds no fingerprints:
 * their secrets will be sent again (a new pod without durable status). `fingerprinted`: the keys
 * whose records held fingerprints before the first reconcile recorded any.
 */
export function findUnknownSecretsAtStart(
  snapshot: DesiredSnapshot,
  live: ReadonlySet<string>,
  fingerprinted: ReadonlySet<string>,
): string[] {
  const desired = [...snapshot.objects]
    .filter(([key]) => !fingerprinted.has(key))
    .map(([, { loaded }]) => ({
      loaded,
      secrets: loaded.manifest.kind === "Deployment" ? loaded.manifest.spec.secrets : undefined,
    }));
  // Every object left holds no fingerprints: none has a record to read.
  return findUnknownSecrets(desired, live, () => undefined);
}

/** One warning at startup when secrets will be re-sent because no fingerprints are recorded (a new pod). */
export function warnUnknownSecrets(names: readonly string[], log: Logger): void {
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
