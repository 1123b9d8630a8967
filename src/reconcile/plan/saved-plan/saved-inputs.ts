import { createHash } from "node:crypto";
import type { DesiredObject, LiveState } from "../../../diff/plan/build-plan.js";
import type { Plan } from "../../../diff/plan/plan-types.js";
import {
  fingerprintSecretsAsync,
  newSalt,
  type SecretFingerprints,
} from "../../../diff/secrets/secret-fingerprint.js";
import type { Deployment } from "../../../schema/deployment.js";
import { canonicalJson, manifestDigest } from "../../../apply/status-record.js";

// What a saved plan records besides the plan (saved-plan.ts): its format's version, the flags it
// was made with, and per object the inputs it was computed from, as digests and fingerprints.

export const SAVED_PLAN_VERSION = 1;

type LiveVersion = { id: string; updated_at: string; latest_revision_id: string | null; digest: string };
type SavedInputs = {
  kind: string;
  name: string;
  manifest_digest: string;
  live: LiveVersion | null;
  secrets: SecretFingerprints | null;
  source_digest: string | null;
};
export type SavedPlan = Plan & {
  saved: {
    version: number;
    created_at: string;
    targets: string[];
    /** Planned with --prune: apply --plan must say --prune too, and deletes exactly plan.prune's. */
    prune: boolean;
    /** Planned with --replace NAME ...: apply --plan must name the same deployments. */
    replace: string[];
    objects: SavedInputs[];
    organization: string | null;
  };
};

const sha256 = (value: unknown) =>
  `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;

/** What plan compares of a live deployment (secret values come back masked: names only). */
const liveDigest = (d: Deployment) =>
  sha256({
    source: d.source,
    source_config: d.source_config,
    source_revision_config: d.source_revision_config,
    secrets: d.secrets.map((s) => s.name),
    secret_references: d.secret_references ?? null,
  });

const liveVersionOf = (live: LiveState, name: string): LiveVersion | null => {
  const d = live.deployments.find((candidate) => candidate.name === name);
  return d
    ? { id: d.id, updated_at: d.updated_at, latest_revision_id: d.latest_revision_id, digest: liveDigest(d) }
    : null;
};

/**
 * The organization and its two settings. Its id too: with the settings alone, a plan applied where
 * the platform API is another organization's (another PLUMB_PLATFORM_URL or key) with the same
 * settings passed, and PATCHed an organization the reviewed plan never showed.
 */
export const organizationDigest = (live: LiveState) =>
  live.organization
    ? sha256({
        id: live.organization.id,
        jit: live.organization.jit_provisioning_enabled,
        invites: live.organization.invites_enabled,
      })
    : null;

export async function inputsOf(desired: DesiredObject, live: LiveState, salt?: string): Promise<SavedInputs> {
  const { manifest } = desired.loaded;
  const secrets = desired.secrets ?? [];
  return {
    kind: manifest.kind,
    name: manifest.metadata.name,
    manifest_digest: manifestDigest(manifest),
    live: manifest.kind === "Deployment" ? liveVersionOf(live, manifest.metadata.name) : null,
    secrets: secrets.length > 0 ? await fingerprintSecretsAsync(secrets, salt ?? newSalt()) : null,
    source_digest: desired.source?.digest ?? null,
  };
}
