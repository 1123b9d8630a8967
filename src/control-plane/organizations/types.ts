/** Records of organization access (spec 2.7, 3.4, 5.4). Plain JSON so they snapshot as is. */

export type WorkspaceRole = "Viewer" | "User" | "Editor" | "Admin";
export type OrgRole = "Organization Admin" | "Organization User" | "Organization Viewer";
type ProvisionedBy = "invite" | "jit" | "scim" | "admin";

export const WORKSPACE_ROLES: readonly WorkspaceRole[] = ["Viewer", "User", "Editor", "Admin"];
export const ORG_ROLES: readonly OrgRole[] = [
  "Organization Admin",
  "Organization User",
  "Organization Viewer",
];

export type WorkspaceGrant = { workspace: string; role: WorkspaceRole };

type Organization = {
  id: string;
  display_name: string;
  jit_provisioning_enabled: boolean;
  invites_enabled: boolean;
  sso_login_slug: string;
  created_at: string;
  /** Creation order; on a self-hosted installation the first organization is the default one. */
  seq: number;
};

/** Default SSO settings, used by JIT provisioning (spec 5.4 rule 4). */
type SsoDefaults = { default_workspace_role: WorkspaceRole; default_workspaces: string[] };

export type Invite = {
  id: string;
  email: string;
  org_role: OrgRole;
  workspaces: WorkspaceGrant[];
  created_at: string;
};

export type Member = {
  id: string;
  email: string;
  org_role: OrgRole;
  workspaces: WorkspaceGrant[];
  provisioned_by: ProvisionedBy;
  /** Set once SCIM manages the user: its group membership decides the workspace roles. */
  scim_managed: boolean;
  created_at: string;
  updated_at: string;
};

/** Everything one tenant's organization holds. Invites listed here are pending; a claimed invite leaves. */
export type OrgState = {
  organization: Organization;
  sso: SsoDefaults;
  invites: Invite[];
  members: Member[];
};
