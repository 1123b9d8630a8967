import { describe, expect, it } from "vitest";
import {
  applyScimGroups,
  decideSignIn,
  effectiveAccess,
  type NewMember,
} from "../../../src/control-plane/organizations/access.js";
import type { OrgState } from "../../../src/control-plane/organizations/types.js";

const newMember: NewMember = (fields) => ({
  id: "m",
  ...fields,
  scim_managed: false,
  created_at: "t",
  updated_at: "t",
});

function org(jit: boolean, invites: boolean, pendingInvite: boolean): OrgState {
  return {
    organization: {
      id: "o",
      display_name: "acme",
      jit_provisioning_enabled: jit,
      invites_enabled: invites,
      sso_login_slug: "acme",
      created_at: "t",
      seq: 1,
    },
    sso: { default_workspace_role: "Editor", default_workspaces: ["ws-a", "ws-b"] },
    invites: pendingInvite
      ? [
          {
            id: "i",
            email: "ann@x.io",
            org_role: "Organization Admin",
            workspaces: [{ workspace: "ws-c", role: "Admin" }],
            created_at: "t",
          },
        ]
      : [],
    members: [],
  };
}

const saas = { mode: "saas", isDefaultOrganization: false, selfHostedJitProvisioningEnabled: true } as const;

describe("sign-in decision (spec 3.4 summary table)", () => {
  const rows: Array<[boolean, boolean, boolean, string]> = [
    [true, true, true, "invite"],
    [true, true, false, "jit"],
    [true, false, false, "jit"],
    [true, false, true, "jit"], // invites off: a stale invite is not claimed
    [false, true, true, "invite"],
    [false, true, false, "denied"],
    [false, false, false, "denied"],
  ];
  it.each(rows)("jit=%s invites=%s pending invite=%s → %s", (jit, invites, pending, expected) => {
    const state = org(jit, invites, pending);
    const decision = decideSignIn(state, "ann@x.io", effectiveAccess(state, saas), newMember);
    const outcome = decision.decision === "provisioned" ? decision.via : decision.decision;
    expect(outcome).toBe(expected);
  });

  it("provisions with the invite's role and workspaces, or with the SSO defaults", () => {
    const invited = decideSignIn(
      org(true, true, true),
      "ann@x.io",
      effectiveAccess(org(true, true, true), saas),
      newMember,
    );
    expect(invited).toMatchObject({
      member: { org_role: "Organization Admin", workspaces: [{ workspace: "ws-c", role: "Admin" }] },
    });
    const jit = decideSignIn(
      org(true, true, false),
      "ann@x.io",
      effectiveAccess(org(true, true, false), saas),
      newMember,
    );
    expect(jit).toMatchObject({
      member: {
        workspaces: [
          { workspace: "ws-a", role: "Editor" },
          { workspace: "ws-b", role: "Editor" },
        ],
      },
    });
  });

  it("signs in an existing member whatever the settings", () => {
    const state = org(false, false, false);
    state.members.push(
      newMember({ email: "ann@x.io", org_role: "Organization User", workspaces: [], provisioned_by: "scim" }),
    );
    expect(decideSignIn(state, "ann@x.io", effectiveAccess(state, saas), newMember).decision).toBe(
      "signed_in",
    );
  });

  it("tells a denied user how to get access", () => {
    const closed = decideSignIn(
      org(false, false, false),
      "ann@x.io",
      effectiveAccess(org(false, false, false), saas),
      newMember,
    );
    expect(closed).toMatchObject({
      decision: "denied",
      detail: expect.stringMatching(/closed access.*SCIM/),
    });
    const noInvite = decideSignIn(
      org(false, true, false),
      "ann@x.io",
      effectiveAccess(org(false, true, false), saas),
      newMember,
    );
    expect(noInvite).toMatchObject({ detail: expect.stringMatching(/no pending invite.*invite you/) });
  });
});

describe("effective access", () => {
  it("self-hosted: only the default organization uses its settings; the env flag turns JIT off", () => {
    const state = org(true, false, false);
    const env = { mode: "self-hosted", selfHostedJitProvisioningEnabled: true } as const;
    expect(effectiveAccess(state, { ...env, isDefaultOrganization: true })).toMatchObject({
      jit: true,
      invites: false,
    });
    expect(effectiveAccess(state, { ...env, isDefaultOrganization: false })).toMatchObject({
      jit: false,
      invites: true,
    });
    const off = effectiveAccess(state, {
      ...env,
      isDefaultOrganization: true,
      selfHostedJitProvisioningEnabled: false,
    });
    expect(off).toMatchObject({
      jit: false,
      why: expect.stringContaining("SELF_HOSTED_JIT_PROVISIONING_ENABLED"),
    });
  });

  it("saas ignores the self-hosted env flag", () => {
    const state = org(true, true, false);
    expect(effectiveAccess(state, { ...saas, selfHostedJitProvisioningEnabled: false }).jit).toBe(true);
  });
});

describe("SCIM groups", () => {
  it("override the role in their workspaces and keep the others", () => {
    const merged = applyScimGroups(
      [
        { workspace: "a", role: "Admin" },
        { workspace: "b", role: "Viewer" },
      ],
      [
        { workspace: "a", role: "Viewer" },
        { workspace: "c", role: "Editor" },
      ],
    );
    expect(merged).toEqual([
      { workspace: "a", role: "Viewer" },
      { workspace: "b", role: "Viewer" },
      { workspace: "c", role: "Editor" },
    ]);
  });
});
