import { buildPlan } from "../../diff/plan/build-plan.js";
import { hideLiveSecrets } from "../plan/live-secrets.js";
import type { LoadedManifest } from "../../manifest/types.js";
import {
  lastAppliedOf,
  checkRecordedSecrets,
  settleRecorded,
  forLiveDeployment,
} from "../plan/plan-object.js";
import { buildDriftReport } from "../drift.js";
import { resolveDesiredObject } from "../plan/resolve-desired.js";
import { type ObjectStatus, statusKey } from "../../status/status-types.js";
import type { Deployment } from "../../schema/deployment.js";
import type { PlannedObject, ReconcileContext } from "./reconcile-types.js";

// One object planned against live, as `plumb plan` plans it (reconcile-object.ts).

/** The same per-object steps as `plumb plan`: fingerprints checked while live is read, intent settled. */
export async function planObject(
  ctx: ReconcileContext,
  loaded: LoadedManifest,
  signal: AbortSignal,
  known: Deployment | null | undefined,
): Promise<PlannedObject> {
  const { manifest } = loaded;
  const key = statusKey(manifest.kind, manifest.metadata.name);
  const { root, env, redactor, secretFiles } = ctx;
  const desired = await resolveDesiredObject(loaded, { root, env, redactor, secretFiles });
  const recorded = ctx.statuses.get(key);
  // The fingerprint checks run on the threadpool while live state is read; then a crash's
  // write-ahead intent is settled against live.
  const [{ deployment, organization }, checkedRecorded] = await Promise.all([
    readLive(ctx, manifest.kind, manifest.metadata.name, signal, known),
    checkRecordedSecrets(desired, recorded, ctx.fingerprintLimit),
  ]);
  const settled = await settleRecorded(desired, recorded, checkedRecorded, deployment, ctx.fingerprintLimit);
  const { previous, checked } = forLiveDeployment(settled, deployment);
  const live = { deployments: deployment ? [deployment] : [], ...(organization ? { organization } : {}) };
  const plan = hideLiveSecrets(
    buildPlan({
      desired: [desired],
      live,
      fingerprints: () => checked ?? previous?.secret_fingerprints ?? undefined,
      sources: () => previous?.source_upload ?? undefined,
      applied: () => lastAppliedOf(previous, desired.loaded.manifest),
    }),
    redactor,
  );
  const drift = buildDriftReport(plan, storeOf(key, previous), live.deployments).items[0]?.reason ?? null;
  return { key, desired, deployment, previous, plan, planned: plan.changes[0]!, drift };
}

export const storeOf = (key: string, previous: ObjectStatus | undefined) => ({
  objects: new Map(previous ? [[key, previous]] : []),
  problems: [],
});
/** This object's live state: `known` from a listing, else a lookup (and the organization settings). */
async function readLive(
  ctx: ReconcileContext,
  kind: LoadedManifest["manifest"]["kind"],
  name: string,
  signal: AbortSignal,
  known: Deployment | null | undefined,
) {
  const deployment =
    kind !== "Deployment"
      ? null
      : known !== undefined
        ? known
        : await ctx.ports.deployments.findDeploymentByName(name, { signal });
  const organization =
    kind === "OrganizationAccess" ? await ctx.platform.getOrganization({ signal }) : undefined;
  return { deployment, organization };
}
