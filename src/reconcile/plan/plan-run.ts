import { stat } from "node:fs/promises";
import { withPlannedChecks } from "../../apply/verify/verify-plan.js";
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import { dirname } from "node:path";
import type { PlatformClient } from "../../api/platform-client.js";
import type { SecretRedactor } from "../../api/secret-redactor.js";
import { buildPlan, type DesiredObject, type LiveState } from "../../diff/plan/build-plan.js";
import { hideLiveSecrets } from "./live-secrets.js";
import type { Plan } from "../../diff/plan/plan-types.js";
import type { CheckedFingerprints } from "../../diff/secrets/secret-fingerprint.js";
import { planReplacements } from "../../diff/plan/plan-replace.js";
import { loadManifestsOnce, type ManifestLoads } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { secretFilesOf } from "../../manifest/source/source-tree.js";
import type { Problem } from "../../manifest/types.js";
import type { Deployment } from "../../schema/deployment.js";
import { resolveDesiredObject } from "./resolve-desired.js";
import { resolveForPlan } from "./plan-environment.js";
import {
  lastAppliedOf,
  checkRecordedSecrets,
  findRefusedCreates,
  settleRecorded,
  forLiveDeployment,
} from "./plan-object.js";
import type { ServerFactsReader } from "./server-facts.js";
import { type ObjectStatus, type StatusStore, statusKey } from "../../status/status-types.js";
import { type LiveReader, readLiveDeployments, selectTargets } from "./targets.js";

// The orchestration of `plumb plan`, reused by apply and drift: load → validate → resolve secrets
// and digest internal_source directories → read live state (one list pass, or name lookups for a few targets, plus the organization) → buildPlan. Nothing is sent.

/** The API clients plan reads live state with. */
type LiveReaders = {
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
  /** Parse a big tree on worker threads too (loadManifests' `parallel`): the commands, not the controller. */
  parallelParse?: boolean;
  /** A directory runs with the Environment documents above it (loadManifests' `environmentsAbove`): the commands. */
  environmentsAbove?: boolean;
  /** An environment was asked for (loadManifests' `environmentRequested`). */
  environmentRequested?: boolean;
  /** Learns each secret value as it is resolved, so server text that echoes one is redacted. */
  redactor?: SecretRedactor;
  /** Deployments that may be replaced (deleted, then created) when an immutable field changes. */
  replace?: readonly string[];
  /**
   * The status record of an object (recordsFromStatus): its secret fingerprints and last upload
   * tell what changed, and a write-ahead intent left by a crash is settled against live.
   */
  recorded?: RecordLookup;
  signal?: AbortSignal;
  /** Plan this environment's view of the manifests (docs/environments.md); required when any is defined. */
  environment?: string;
  /** The command's loads (loadManifestsOnce): its environments' plans parse the tree once. */
  loads?: ManifestLoads | undefined;
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
      /** With an environment: the files of Deployments that do not run in it (a removal there). */
      elsewhere: readonly string[];
    };

export type RecordLookup = (kind: string, name: string) => ObjectStatus | undefined;

/** Reads the records apply wrote (status store) for planManifests. */
export function recordsFromStatus(store: StatusStore): RecordLookup {
  return (kind, name) => store.objects.get(statusKey(kind, name));
}

export async function planManifests(options: PlanManifestsOptions): Promise<PlanManifestsResult> {
  markPlanPhase("start");
  const env = options.env ?? process.env;
  const loaded = await loadManifestsOnce(options.loads, options.root, {
    maxBytes: maxManifestBytesFrom(env),
    ...(options.parallelParse ? { parallel: true } : {}),
    ...(options.environmentsAbove ? { environmentsAbove: true } : {}),
    ...(options.environmentRequested ? { environmentRequested: true } : {}),
  });
  const resolved = resolveForPlan(loaded, options.environment, options.targets ?? []);
  const { manifests, problems } = resolved ?? loaded;
  if (problems.some((p) => p.severity === "error")) return { ok: false, problems };
  const selected = resolved ? resolved.selected : selectTargets(manifests, options.targets ?? []);
  // loadManifests also takes one file: its paths (and secret files) are relative to its directory.
  const root = (await stat(options.root)).isDirectory() ? options.root : dirname(options.root);
  // Any manifest's secret file is left out of every upload, not only its own deployment's.
  const secretFiles = await secretFilesOf(manifests, root);
  const desired = await Promise.all(
    selected.map((loaded) =>
      resolveDesiredObject(loaded, { root, env, redactor: options.redactor, secretFiles }),
    ),
  );
  markPlanPhase("loaded");

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
    }).finally(() => markPlanPhase("live-read")),
    readOrganization(),
    checkAllRecordedSecrets(desired, options.recorded).finally(() => markPlanPhase("fingerprints-checked")),
  ]);
  const live: LiveState = organization ? { deployments, organization } : { deployments };
  if (readers.server) {
    const refused = await findRefusedCreates(readers.server, selected, deployments, options.signal);
    if (refused.length > 0) return { ok: false, problems: [...problems, ...refused] };
  }
  const records = await settleAllRecorded(desired, deployments, options.recorded, fingerprints);
  const manifestOf = new Map(
    desired.map(({ loaded: { manifest } }) => [statusKey(manifest.kind, manifest.metadata.name), manifest]),
  );
  const input = {
    desired,
    live,
    fingerprints: (kind: string, name: string) => {
      const key = statusKey(kind, name);
      return records.checked.get(key) ?? records.previous.get(key)?.secret_fingerprints ?? undefined;
    },
    sources: (kind: string, name: string) =>
      records.previous.get(statusKey(kind, name))?.source_upload ?? undefined,
    applied: (kind: string, name: string) =>
      lastAppliedOf(records.previous.get(statusKey(kind, name)), manifestOf.get(statusKey(kind, name))!),
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
  // What apply will check after DEPLOYED (spec.verify) and what was measured last.
  const plan = withPlannedChecks(
    hideLiveSecrets(planReplacements(buildPlan(input), input, allowed), options.redactor),
    manifestOf,
    records.previous,
  );
  markPlanPhase("built");
  return { ok: true, plan, desired, live, problems, root, elsewhere: resolved?.elsewhere ?? [] };
}

/**
 * Where a plan's time goes, on Node's performance timeline (User Timing marks `plumb:plan:PHASE`):
 * start, loaded (files read, parsed, validated, secrets resolved), live-read and
 * fingerprints-checked (in parallel), built (records settled, the diff), formatted (cli/plan.ts).
 * `npm run bench -- plan` reports them; each run replaces the previous run's marks.
 */
export function markPlanPhase(
  phase: "start" | "loaded" | "live-read" | "fingerprints-checked" | "built" | "formatted",
): void {
  if (phase === "start") for (const name of PLAN_MARKS) performance.clearMarks(name);
  performance.mark(`plumb:plan:${phase}`);
}
const PLAN_MARKS = ["start", "loaded", "live-read", "fingerprints-checked", "built", "formatted"].map(
  (phase) => `plumb:plan:${phase}`,
);

type Checked = Map<string, CheckedFingerprints>;

/**
 * The slow fingerprint checks (scrypt) of every desired secret value, run on libuv's threadpool
 * while live state is read, so buildPlan (pure, synchronous) finds the answers ready. Bounded to
 * leave a threadpool slot free (DNS lookups and file reads share the pool). Keyed by status key.
 */
async function checkAllRecordedSecrets(
  desired: readonly DesiredObject[],
  recorded: RecordLookup | undefined,
): Promise<Checked> {
  const limit = pLimit(Math.max(1, Math.min(3, availableParallelism())));
  const checked: Checked = new Map();
  if (!recorded) return checked;
  await Promise.all(
    desired.map(async (object) => {
      const { kind, metadata } = object.loaded.manifest;
      const result = await checkRecordedSecrets(object, recorded(kind, metadata.name), limit);
      if (result) checked.set(statusKey(kind, metadata.name), result);
    }),
  );
  return checked;
}

/** Every desired object's record with its crash intent settled against live (settleRecorded). */
async function settleAllRecorded(
  desired: readonly DesiredObject[],
  deployments: readonly Deployment[],
  recorded: RecordLookup | undefined,
  checked: Checked,
): Promise<{ previous: Map<string, ObjectStatus>; checked: Checked }> {
  const previous = new Map<string, ObjectStatus>();
  if (!recorded) return { previous, checked };
  const live = new Map(deployments.map((d) => [d.name, d]));
  const settled: Checked = new Map(checked);
  await Promise.all(
    desired.map(async (object) => {
      const { kind, metadata } = object.loaded.manifest;
      const key = statusKey(kind, metadata.name);
      const deployment = kind === "Deployment" ? (live.get(metadata.name) ?? null) : null;
      const result = forLiveDeployment(
        await settleRecorded(object, recorded(kind, metadata.name), checked.get(key), deployment),
        deployment,
      );
      if (result.previous) previous.set(key, result.previous);
      if (result.checked) settled.set(key, result.checked);
      else settled.delete(key);
    }),
  );
  return { previous, checked: settled };
}
