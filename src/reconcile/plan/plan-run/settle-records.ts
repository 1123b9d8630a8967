import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import type { DesiredObject } from "../../../diff/plan/build-plan.js";
import type { CheckedFingerprints } from "../../../diff/secrets/secret-fingerprint.js";
import type { Deployment } from "../../../schema/deployment.js";
import { checkRecordedSecrets, settleRecorded, forLiveDeployment } from "../plan-object.js";
import { type ObjectStatus, statusKey } from "../../../status/status-types.js";
import type { RecordLookup } from "./plan-options.js";

// Every desired object's status record as the plan reads it: secret fingerprints checked while live
// is read, and crash intents settled against live.

type Checked = Map<string, CheckedFingerprints>;

/**
 * The slow fingerprint checks (scrypt) of every desired secret value, run on libuv's threadpool
 * while live state is read, so buildPlan (pure, synchronous) finds the answers ready. Bounded to
 * leave a threadpool slot free (DNS lookups and file reads share the pool). Keyed by status key.
 */
export async function checkAllRecordedSecrets(
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
export async function settleAllRecorded(
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
