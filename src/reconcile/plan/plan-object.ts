import type { DesiredObject } from "../../diff/plan/build-plan.js";
import type { PlannedChange } from "../../diff/plan/plan-types.js";
import type { AppliedBase } from "../../diff/three-way.js";
import { type CheckedFingerprints, checkFingerprints } from "../../diff/secrets/secret-fingerprint.js";
import type { Derivations } from "../../diff/secrets/scrypt-derivations.js";
import { checkServerRules } from "../../manifest/rules/server-rules.js";
import type { LoadedManifest, Problem } from "../../manifest/types.js";
import type { Deployment } from "../../schema/deployment.js";
import type { DeploymentManifest, Manifest } from "../../schema/manifest.js";
import { appliedSpecOf, manifestDigest } from "../../apply/status-record.js";
import type { ApplyObject } from "../../apply/apply-types.js";
import { packSource } from "../../apply/upload/source-pack.js";
import { resolvePending } from "../../status/pending-intent.js";
import { blankObjectStatus, type ObjectStatus } from "../../status/status-types.js";
import { readServerFacts, type ServerFactsReader } from "./server-facts.js";

// The per-object steps of a plan and its apply, shared by `plumb plan`/`apply` (planManifests, for
// every object of a run) and the controller (reconcileObject, one object at a time), so the two
// cannot drift apart: check the recorded secret fingerprints, settle a crash's write-ahead intent
// against live, check a create against the installation, and turn a planned change into the
// engine's input.

/**
 * What the record says plumb last applied to the object git now defines as `manifest` (the three-way
 * model's base; docs/status.md "Three-way"). A record older than applied_spec has only the digest of
 * what was applied: when it is the digest of git's manifest now, the last apply applied exactly what
 * git says, so git's spec is the base; otherwise the base is "unknown". undefined: nothing applied.
 */
export function lastAppliedOf(record: ObjectStatus | undefined, manifest: Manifest): AppliedBase {
  const fingerprints = record?.secret_fingerprints ?? undefined;
  if (record?.applied_spec) return { spec: record.applied_spec, fingerprints };
  if (!record?.manifest_digest) return undefined;
  if (record.manifest_digest !== manifestDigest(manifest)) return "unknown";
  return { spec: appliedSpecOf({ manifest })!, fingerprints };
}

/** Bounds the scrypt checks in flight (libuv's threadpool is shared with DNS and file reads). */
export type TaskLimit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * The desired secret values checked against recorded fingerprints (scrypt, off the main thread, each
 * input derived once per process: `derivations`), so the synchronous buildPlan finds the answers
 * ready; undefined when nothing is recorded or sent.
 */
export async function checkRecordedSecrets(
  desired: DesiredObject,
  recorded: ObjectStatus | undefined,
  limit?: TaskLimit,
  derivations?: Derivations,
): Promise<CheckedFingerprints | undefined> {
  const fingerprints = recorded?.secret_fingerprints;
  if (desired.loaded.manifest.kind !== "Deployment" || !fingerprints || !desired.secrets?.length)
    return undefined;
  return checkFingerprints(fingerprints, desired.secrets, limit, derivations);
}

/**
 * A write-ahead intent left by a crash, settled against live (pending-intent.ts): where live shows
 * the request landed, the record takes the intent's fingerprints and the desired values are checked
 * against those instead (rare: only objects with a landed intent pay a second check).
 */
export async function settleRecorded(
  desired: DesiredObject,
  recorded: ObjectStatus | undefined,
  checked: CheckedFingerprints | undefined,
  live: Deployment | null,
  limit?: TaskLimit,
): Promise<{ previous: ObjectStatus | undefined; checked: CheckedFingerprints | undefined }> {
  if (!recorded?.pending) return { previous: recorded, checked };
  const previous = resolvePending(recorded, live);
  if (previous.secret_fingerprints === recorded.secret_fingerprints) return { previous, checked };
  return { previous, checked: await checkRecordedSecrets(desired, previous, limit) };
}

/**
 * The settled record, unless it speaks of another deployment than the live one of that name (its id
 * differs: deleted and created again outside plumb, or a record applied to another control plane):
 * then what was applied and seen there says nothing about this one and is left out (secrets
 * unknown: sent again, as with no record; no verify thread, checks or health carried over), while
 * which file defines the object stays (prune scoped to a file still finds it).
 */
export function forLiveDeployment<T extends { previous: ObjectStatus | undefined }>(
  settled: T,
  live: Deployment | null,
): T | { previous: ObjectStatus; checked: undefined } {
  const { previous } = settled;
  if (!previous?.id || !live || previous.id === live.id) return settled;
  const blank = blankObjectStatus(previous.kind, previous.name);
  return {
    previous: { ...blank, ...(previous.manifest_file ? { manifest_file: previous.manifest_file } : {}) },
    checked: undefined,
  };
}

/**
 * The deployments among `loaded` that a plan would create (absent, or replaced by another source),
 * checked against the installation's rules (docs/plan.md "Installation rules"): a create the server
 * would refuse is a problem with file:line, found before anything is sent.
 */
export async function findRefusedCreates(
  server: ServerFactsReader,
  loaded: readonly LoadedManifest[],
  deployments: readonly Deployment[],
  signal: AbortSignal | undefined,
): Promise<Problem[]> {
  const live = new Map(deployments.map((d) => [d.name, d]));
  const creates = loaded.filter(
    (object): object is LoadedManifest<DeploymentManifest> =>
      object.manifest.kind === "Deployment" &&
      live.get(object.manifest.metadata.name)?.source !== object.manifest.spec.source,
  );
  if (creates.length === 0) return [];
  const facts = await readServerFacts(
    server,
    creates.map((object) => object.manifest),
    signal,
  );
  return checkServerRules(creates, facts);
}

/** The engine's input for one planned change: its manifest's verify spec, digest and source to pack. */
export function buildApplyObject(
  change: PlannedChange,
  desired: DesiredObject | undefined,
  root: string,
): ApplyObject {
  const manifest = desired?.loaded.manifest;
  const source = desired?.source;
  return {
    change,
    loaded: desired?.loaded,
    verify: manifest?.kind === "Deployment" ? manifest.spec.verify : undefined,
    manifestDigest: manifest ? manifestDigest(manifest) : null,
    source:
      desired && source
        ? {
            digest: source.digest,
            pack: () =>
              packSource(
                desired.loaded as LoadedManifest<DeploymentManifest>,
                root,
                source.digest,
                source.secret_files,
              ),
          }
        : undefined,
  };
}
