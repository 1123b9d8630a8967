import type { PublicObjectStatus } from "../controller-types.js";
import type { EnvironmentClaim } from "./environment-claim.js";

// The status page's data with the environment dimension (GET /ui/api/environments): per
// environment, its role on this replica and, where led here, each object's revision, version
// (repo_ref or image as last applied), sync and health — what a deployment × environment matrix
// is drawn from. Environments led by another replica say so and list nothing here.

export type EnvironmentRecord = {
  environment: string;
  role: string;
  leader?: string;
  error?: string;
  /** Its Environment document in git is invalid: the problem (the last valid one runs). */
  invalid?: string;
  objects: Array<{
    kind: string;
    name: string;
    id: string | null;
    latest_revision_id: string | null;
    active_revision_id: string | null;
    revision_status: string | null;
    version: { repo_ref?: string; image_uri?: string } | null;
    sync: string;
    health: string;
    updated_at: string;
  }>;
};

export function environmentRecords(
  claims: readonly EnvironmentClaim[],
  invalid: (environment: string) => string | undefined = () => undefined,
): EnvironmentRecord[] {
  return claims.map((c) => {
    const problem = invalid(c.name);
    const store = c.role() === "leader" ? c.store() : undefined;
    return {
      environment: c.name,
      role: c.role(),
      ...(c.leader() && c.role() !== "leader" ? { leader: c.leader()! } : {}),
      ...(c.error() ? { error: c.error()! } : {}),
      ...(problem ? { invalid: problem } : {}),
      objects: store ? store.status().objects.map(recordOf) : [],
    };
  });
}

function recordOf(o: PublicObjectStatus): EnvironmentRecord["objects"][number] {
  return {
    kind: o.kind,
    name: o.name,
    id: o.id,
    latest_revision_id: o.latest_revision_id,
    active_revision_id: o.active_revision_id,
    revision_status: o.revision_status,
    version: versionOf(o.applied_spec),
    sync: o.sync,
    health: o.health,
    updated_at: o.updated_at,
  };
}

function versionOf(
  spec: Record<string, unknown> | null | undefined,
): EnvironmentRecord["objects"][number]["version"] {
  const config = spec?.source_revision_config as { repo_ref?: unknown; image_uri?: unknown } | undefined;
  if (!config) return null;
  return {
    ...(typeof config.repo_ref === "string" ? { repo_ref: config.repo_ref } : {}),
    ...(typeof config.image_uri === "string" ? { image_uri: config.image_uri } : {}),
  };
}
