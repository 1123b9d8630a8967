import { stat } from "node:fs/promises";
import { withPlannedChecks } from "../../apply/verify/verify-plan.js";
import { dirname } from "node:path";
import { buildPlan, type LiveState } from "../../diff/plan/build-plan.js";
import { hideLiveSecrets } from "./live-secrets.js";
import { planReplacements } from "../../diff/plan/plan-replace.js";
import { loadManifestsOnce } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { secretFilesOf } from "../../manifest/source/source-tree.js";
import { resolveDesiredObject } from "./resolve-desired.js";
import { resolveForPlan } from "./plan-environment.js";
import { lastAppliedOf, findRefusedCreates } from "./plan-object.js";
import { type StatusStore, statusKey } from "../../status/status-types.js";
import { readLiveDeployments, selectTargets } from "./targets.js";
import type { PlanManifestsOptions, PlanManifestsResult, RecordLookup } from "./plan-run/plan-options.js";
import { markPlanPhase } from "./plan-run/plan-phases.js";
import { checkAllRecordedSecrets, settleAllRecorded } from "./plan-run/settle-records.js";

export type { PlanManifestsOptions, PlanManifestsResult } from "./plan-run/plan-options.js";
export { markPlanPhase } from "./plan-run/plan-phases.js";

// The orchestration of `plumb plan`, reused by apply and drift: load → validate → resolve secrets
// and digest internal_source directories → read live state (one list pass, or name lookups for a few targets, plus the organization) → buildPlan. Nothing is sent.

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
