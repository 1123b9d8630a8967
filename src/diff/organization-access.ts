import type { Organization } from "../schema/deployment.js";
import type { OrganizationAccessSpec } from "../schema/manifest.js";
import type { FieldChange } from "./fields.js";
import type { JsonObject } from "./values.js";

export const ORGANIZATION_INFO_PATH = "/api/v1/organizations/current/info";

type Settings = { jit_provisioning_enabled: boolean; invites_enabled: boolean };

/** Who can join an SSO organization with these settings (spec 3.4). */
function describeAccess({ jit_provisioning_enabled: jit, invites_enabled: invites }: Settings): string {
  if (jit && invites) {
    return "SSO users join automatically with the default role and workspaces; a pending invite takes precedence";
  }
  if (jit)
    return "SSO users join automatically with the default role and workspaces; invitations cannot be sent";
  if (invites)
    return "only SSO users with a pending invite can join (or users added through SCIM or by an administrator)";
  return "closed: SSO users join only through SCIM or an administrator; invitations cannot be sent";
}

export type OrganizationDiff = {
  live: JsonObject;
  desired: JsonObject;
  fields: FieldChange[];
  body: JsonObject;
  /** One line: who can join after the change. */
  effect: string;
};

/** Managed settings (present in the manifest) against the live organization. */
export function diffOrganizationAccess(spec: OrganizationAccessSpec, live: Organization): OrganizationDiff {
  const out: Omit<OrganizationDiff, "effect"> = { live: {}, desired: {}, fields: [], body: {} };
  const after: Settings = {
    jit_provisioning_enabled: live.jit_provisioning_enabled,
    invites_enabled: live.invites_enabled,
  };
  for (const key of ["jit_provisioning_enabled", "invites_enabled"] as const) {
    const value = spec[key];
    if (value === undefined) continue;
    out.live[key] = live[key];
    out.desired[key] = value;
    after[key] = value;
    if (value === live[key]) continue;
    out.fields.push({ field: key, class: "in_place", old: live[key], new: value });
    out.body[key] = value;
  }
  return { ...out, effect: describeAccess(after) };
}
