import { stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import { dirname } from "node:path";
import type { PlatformClient } from "../api/platform-client.js";
import {
  buildPlan,
  type DesiredObject,
  type FingerprintLookup,
  type LiveState,
  type SourceLookup,
} from "../diff/build-plan.js";
import type { Plan } from "../diff/plan-types.js";
import { type CheckedFingerprints, checkFingerprints } from "../diff/secret-fingerprint.js";
import { planReplacements } from "../diff/plan-replace.js";
import { loadManifests } from "../manifest/load.js";
import { maxManifestBytesFrom } from "../manifest/parse.js";
import { checkServerRules } from "../manifest/server-rules.js";
import type { LoadedManifest, Problem } from "../manifest/types.js";
import type { DeploymentManifest } from "../schema/manifest.js";
import type { Deployment } from "../schema/deployment.js";
import { resolvePending } from "../status/pending-intent.js";
import { resolveDesiredObject } from "./resolve-desired.js";
import { readServerFacts, type ServerFactsReader } from "./server-facts.js";
import { type ObjectStatus, type StatusStore, statusKey } from "../status/status-types.js";
import { type LiveReader, readLiveDeployments, selectTargets } from "./targets.js";

// The orchestration of `plumb plan`, reused by apply and drift: load → validate → resolve secrets
// and digest internal_source directories → read live state (one list pass, or name lookups for a few targets, plus the organization) → buildPlan. Nothing is sent.

/** The API clients plan reads live state with. */
export type LiveReaders = {
  controlPlane: LiveReader;
  /** Needed only when an OrganizationAccess manifest is planned. */
  platform?: Pick<PlatformClient, "getOrganization"> | undefined;
  /** Reads the installation's create rules (mode, integrations, listeners) when a plan creates. */
  server?: ServerFactsReader | undefined;
};

export type PlanManifestsOptions = PlanBaseOptions &
  (
    | LiveReaders
    | {
        /**
         * Builds the clients (reads the API settings): called once, after the manifests are valid
         * and before any read starts, so a missing setting fails before anything is in flight.
         */
        connect: () => LiveReaders;
      }
  );

type PlanBaseOptions = {
  /** Manifest root (directory or one file). */
  root: string;
  /** Only these object names (metadata.name); all when empty. An unknown name is a UsageError. */
  targets?: readonly string[];
  /** With targets, up to this many deployments are looked up by name instead of listed (default 10). */
  targetLookupLimit?: number;
  /** Environment for `valueFrom: {env}` secrets; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Fingerprints of the secret values last applied; see fingerprintsFromStatus. */
  fingerprints?: FingerprintLookup;
  /** Deployments that may be replaced (deleted, then created) when an immutable field changes. */
  replace?: readonly string[];
  /** What plumb last uploaded to internal_source deployments; see sourcesFromStatus. */
  sources?: SourceLookup;
  /** Records with a write-ahead intent left by a crash (pendingFromStatus): settled against live. */
  pending?: (kind: string, name: string) => ObjectStatus | undefined;
  signal?: AbortSignal;
};

export type PlanManifestsResult =
  /**
   * Invalid manifests (stopped before any API call), or creates the installation refuses (its
   * mode, integrations, listeners: stopped after reading, before anything is sent).
   */
  | { ok: false; problems: Problem[] }
  | {
      ok: true;
      plan: Plan;
      desired: DesiredObject[];
      live: LiveState;
      problems: Problem[];
      /** The directory manifest paths are relative to (the root, or the one file's directory). */
      root: string;
    };

/** Reads the secret fingerprints recorded by apply (status store) for buildPlan. */
export function fingerprintsFromStatus(store: StatusStore): FingerprintLookup {
  return (kind, name) => store.objects.get(statusKey(kind, name))?.secret_fingerprints ?? undefined;
}

/** Records still holding a write-ahead intent (a crash between a send and its record). */
export function pendingFromStatus(
  store: StatusStore,
): (kind: string, name: string) => ObjectStatus | undefined {
  return (kind, name) => {
    const record = store.objects.get(statusKey(kind, name));
    return record?.pending ? record : undefined;
  };
}

/** Reads the source uploads recorded by apply (status store) for buildPlan. */
export function sourcesFromStatus(store: StatusStore): SourceLookup {
  return (kind, name) => store.objects.get(statusKey(kind, name))?.source_upload ?? undefined;
}

export async function planManifests(options: PlanManifestsOptions): Promise<PlanManifestsResult> {
  const env = options.env ?? process.env;
  const { manifests, problems } = await loadManifests(options.root, { maxBytes: maxManifestBytesFrom(env) });
  if (problems.some((p) => p.severity === "error")) return { ok: false, problems };
  const selected = selectTargets(manifests, options.targets ?? []);
  // loadManifests also takes one file: its paths (and secret files) are relative to its directory.
  const root = (await stat(options.root)).isDirectory() ? options.root : dirname(options.root);
  const desired = await Promise.all(selected.map((loaded) => resolveDesiredObject(loaded, { root, env })));

  const wantsOrganization = selected.some((m) => m.manifest.kind === "OrganizationAccess");
  const signal = options.signal ? { signal: options.signal } : {};
  // With --target only the targeted deployments are needed: a few name lookups beat listing all.
  const targeted = options.targets?.length
    ? selected.filter((m) => m.manifest.kind === "Deployment").map((m) => m.manifest.metadata.name)
    : undefined;
  // Settings errors surface here, before any read is in flight (no read is left unawaited).
  const readers = "connect" in options ? options.connect() : options;
  const { platform } = readers;
  // Both reads are async functions: a throw becomes their rejection, awaited by Promise.all.
  const readOrganization = async () =>
    wantsOrganization && platform ? platform.getOrganization(signal) : undefined;
  const [deployments, organization, fingerprints] = await Promise.all([
    readLiveDeployments(readers.controlPlane, targeted, {
      ...signal,
      ...(options.targetLookupLimit !== undefined ? { lookupLimit: options.targetLookupLimit } : {}),
    }),
    readOrganization(),
    options.fingerprints ? checkDesiredFingerprints(desired, options.fingerprints) : undefined,
  ]);
  const live: LiveState = organization ? { deployments, organization } : { deployments };
  if (readers.server) {
    const refused = await checkCreates(readers.server, selected, deployments, options.signal);
    if (refused.length > 0) return { ok: false, problems: [...problems, ...refused] };
  }
  const settled = options.pending
    ? await landedIntentFingerprints(desired, deployments, options.pending, fingerprints)
    : fingerprints;
  const input = {
    desired,
    live,
    ...(settled ? { fingerprints: settled } : {}),
    ...(options.sources ? { sources: options.sources } : {}),
  };
  // Deployments the user allows to be replaced: --replace NAME, or plumb/replace: allowed.
  const replace = new Set(options.replace ?? []);
  const allowed = (name: string) =>
    replace.has(name) ||
    desired.some(
      (d) =>
        d.loaded.manifest.metadata.name === name &&
        (d.loaded.manifest.metadata as { annotations?: Record<string, string> }).annotations?.[
          "plumb/replace"
        ] === "allowed",
    );
  const plan = planReplacements(buildPlan(input), input, allowed);
  return { ok: true, plan, desired, live, problems, root };
}

/** Deployments the plan would create (absent, or replaced by another source), checked against the installation. */
async function checkCreates(
  server: ServerFactsReader,
  selected: readonly LoadedManifest[],
  deployments: readonly Deployment[],
  signal: AbortSignal | undefined,
): Promise<Problem[]> {
  const live = new Map(deployments.map((d) => [d.name, d]));
  const creates = selected.filter(
    (loaded): loaded is LoadedManifest<DeploymentManifest> =>
      loaded.manifest.kind === "Deployment" &&
      live.get(loaded.manifest.metadata.name)?.source !== loaded.manifest.spec.source,
  );
  const facts = await readServerFacts(
    server,
    creates.map((loaded) => loaded.manifest),
    signal,
  );
  return checkServerRules(creates, facts);
}

/**
 * A crash left intents: where live shows the request landed, the desired values are checked against
 * the intent's fingerprints instead (rare: only objects with an intent pay a second check).
 */
async function landedIntentFingerprints(
  desired: readonly DesiredObject[],
  deployments: readonly Deployment[],
  pending: (kind: string, name: string) => ObjectStatus | undefined,
  base: FingerprintLookup | undefined,
): Promise<FingerprintLookup | undefined> {
  const landed = new Map<string, CheckedFingerprints>();
  const live = new Map(deployments.map((d) => [d.name, d]));
  await Promise.all(
    desired.map(async ({ loaded, secrets }) => {
      const { kind, metadata } = loaded.manifest;
      const record = kind === "Deployment" ? pending(kind, metadata.name) : undefined;
      if (!record) return;
      const settled = resolvePending(record, live.get(metadata.name) ?? null);
      const recorded = settled.secret_fingerprints;
      if (recorded && recorded !== record.secret_fingerprints && secrets?.length)
        landed.set(metadata.name, await checkFingerprints(recorded, secrets));
    }),
  );
  if (landed.size === 0) return base;
  return (kind, name) => (kind === "Deployment" ? landed.get(name) : undefined) ?? base?.(kind, name);
}

/**
 * The slow fingerprint checks (scrypt) of every desired secret value, run on libuv's threadpool
 * while live state is read, so buildPlan (pure, synchronous) finds the answers ready. Bounded to
 * leave a threadpool slot free (DNS lookups and file reads share the pool).
 */
async function checkDesiredFingerprints(
  desired: readonly DesiredObject[],
  lookup: FingerprintLookup,
): Promise<FingerprintLookup> {
  const limit = pLimit(Math.max(1, Math.min(3, availableParallelism())));
  const checked = new Map<string, CheckedFingerprints>();
  await Promise.all(
    desired.map(async ({ loaded, secrets }) => {
      const { kind, metadata } = loaded.manifest;
      const recorded = kind === "Deployment" && secrets?.length ? lookup(kind, metadata.name) : undefined;
      if (recorded) checked.set(metadata.name, await checkFingerprints(recorded, secrets ?? [], limit));
    }),
  );
  return (kind, name) => (kind === "Deployment" ? checked.get(name) : undefined) ?? lookup(kind, name);
}
