import type { Invite, Member, OrgState, WorkspaceGrant } from "./types.js";

/** Installation facts the access rules depend on. */
export type AccessEnvironment = {
  mode: "saas" | "self-hosted";
  /** Self-hosted: whether this organization is the default one (`default_sso_provision`). */
  isDefaultOrganization: boolean;
  /** Self-hosted: SELF_HOSTED_JIT_PROVISIONING_ENABLED; false turns JIT off for every organization. */
  selfHostedJitProvisioningEnabled: boolean;
};

export type EffectiveAccess = { jit: boolean; invites: boolean; why: string | null };

/** The onboarding settings that actually apply (spec 4.3 and 5.4 rule 6). */
export function effectiveAccess(state: OrgState, env: AccessEnvironment): EffectiveAccess {
  const { jit_provisioning_enabled: jit, invites_enabled: invites } = state.organization;
  if (env.mode === "saas") return { jit, invites, why: null };
  if (!env.isDefaultOrganization) {
    return {
      jit: false,
      invites: true,
      why: "on a self-hosted installation only the default organization provisions SSO users; this one uses invites only",
    };
  }
  if (jit && !env.selfHostedJitProvisioningEnabled) {
    return {
      jit: false,
      invites,
      why: "JIT provisioning is disabled for the whole installation (SELF_HOSTED_JIT_PROVISIONING_ENABLED=false)",
    };
  }
  return { jit, invites, why: null };
}

export type SignInDecision =
  | { decision: "signed_in"; member: Member }
  | { decision: "provisioned"; via: "invite"; member: Member; invite: Invite }
  | { decision: "provisioned"; via: "jit"; member: Member }
  | { decision: "denied"; detail: string };

export type NewMember = (
  fields: Pick<Member, "email" | "org_role" | "workspaces" | "provisioned_by">,
) => Member;

/** The sign-in decision of spec 3.4; pure: the caller stores the member and drops the claimed invite. */
export function decideSignIn(
  state: OrgState,
  email: string,
  access: EffectiveAccess,
  newMember: NewMember,
): SignInDecision {
  const member = state.members.find((candidate) => candidate.email === email);
  if (member !== undefined) return { decision: "signed_in", member };
  const invite = access.invites ? state.invites.find((candidate) => candidate.email === email) : undefined;
  if (invite !== undefined) {
    return {
      decision: "provisioned",
      via: "invite",
      invite,
      member: newMember({
        email,
        org_role: invite.org_role,
        workspaces: invite.workspaces.map((grant) => ({ ...grant })),
        provisioned_by: "invite",
      }),
    };
  }
  if (access.jit) {
    const role = state.sso.default_workspace_role;
    const workspaces = state.sso.default_workspaces.map((workspace) => ({ workspace, role }));
    return {
      decision: "provisioned",
      via: "jit",
      member: newMember({ email, org_role: "Organization User", workspaces, provisioned_by: "jit" }),
    };
  }
  return { decision: "denied", detail: deniedDetail(state, email, access) };
}

function deniedDetail(state: OrgState, email: string, access: EffectiveAccess): string {
  const org = state.organization.display_name;
  const reason = access.why !== null ? ` (${access.why})` : "";
  if (access.invites) {
    return `Access denied: ${email} has no pending invite to organization ${org} and JIT provisioning is off${reason}. Ask an organization administrator to invite you, to add you, or to provision you through SCIM.`;
  }
  return `Access denied: organization ${org} has closed access (JIT provisioning and invites are both off${reason}). Ask an organization administrator to add you directly or through SCIM.`;
}

/** SCIM group membership overrides workspace roles set by hand, an invite or JIT (spec 5.4 rule 5). */
export function applyScimGroups(
  current: readonly WorkspaceGrant[],
  groups: readonly WorkspaceGrant[],
): WorkspaceGrant[] {
  const byWorkspace = new Map(current.map((grant) => [grant.workspace, { ...grant }]));
  for (const group of groups) byWorkspace.set(group.workspace, { ...group });
  return [...byWorkspace.values()];
}
