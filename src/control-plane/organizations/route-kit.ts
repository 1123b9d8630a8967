import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ControlPlaneContext } from "../context.js";
import { effectiveAccess, type NewMember } from "./access.js";
import type { OrganizationStore } from "./store.js";
import type { OrgState } from "./types.js";
import type { Parsed } from "./validation.js";

// The kit the organization routes are built with, once per server (orgRouteKit), and its inputs.

export type OrganizationRoutesDeps = {
  ctx: ControlPlaneContext;
  store: OrganizationStore;
  selfHostedJitProvisioningEnabled: boolean;
};

/** What every organization route shares: the tenant's state, its access rules and the replies. */
export type OrgRouteKit = {
  ctx: ControlPlaneContext;
  iso: () => string;
  stateOf: (request: FastifyRequest) => Promise<OrgState>;
  isDefault: (state: OrgState) => boolean;
  accessOf: (state: OrgState) => ReturnType<typeof effectiveAccess>;
  info: (state: OrgState) => Record<string, unknown>;
  refusal: (state: OrgState, patch: Record<string, unknown>) => string | undefined;
  newMember: NewMember;
  valid: <T>(parsed: Parsed<T>, reply: FastifyReply) => T | undefined;
  conflict: (reply: FastifyReply, detail: string) => FastifyReply;
};

export function orgRouteKit({
  ctx,
  store,
  selfHostedJitProvisioningEnabled,
}: OrganizationRoutesDeps): OrgRouteKit {
  const iso = () => new Date(ctx.clock.now()).toISOString();
  // Creating the organization on first use is a write like any other: persist it before answering.
  const stateOf = async (request: FastifyRequest) => {
    const { state, created } = store.of(ctx.tenantOf(request), iso());
    if (created) await ctx.commit();
    return state;
  };
  const isDefault = (state: OrgState) => ctx.mode === "self-hosted" && store.isDefault(state);
  const accessOf = (state: OrgState) =>
    effectiveAccess(state, {
      mode: ctx.mode,
      isDefaultOrganization: isDefault(state),
      selfHostedJitProvisioningEnabled,
    });

  /**
   * Spec 2.7 fields, as they apply: a self-hosted non-default organization shows the fixed
   * invites-only settings it runs with, and with SELF_HOSTED_JIT_PROVISIONING_ENABLED=false JIT
   * shows off (spec 5.4 rule 6: "whatever their own setting"), as sign-in decides.
   */
  const info = (state: OrgState) => {
    const { seq: _seq, created_at: _created, ...fields } = state.organization;
    const access = accessOf(state);
    return {
      ...fields,
      ...(ctx.mode === "self-hosted"
        ? { jit_provisioning_enabled: access.jit, invites_enabled: access.invites }
        : {}),
      default_sso_provision: isDefault(state),
    };
  };
  /** Why `patch` cannot take effect on this installation (400), or undefined. */
  const refusal = (state: OrgState, patch: Record<string, unknown>): string | undefined => {
    if (ctx.mode !== "self-hosted") return undefined;
    if (!isDefault(state) && Object.keys(patch).length > 0)
      return `On a self-hosted installation the SSO onboarding settings apply only to the default organization (default_sso_provision = true); organization ${state.organization.display_name} uses invites only.`;
    if (patch.jit_provisioning_enabled === true && !selfHostedJitProvisioningEnabled)
      return "JIT provisioning is disabled for the whole installation (SELF_HOSTED_JIT_PROVISIONING_ENABLED=false), whatever an organization's own setting: enabling it here would have no effect. Set the variable to true on the installation and restart it, or leave jit_provisioning_enabled false and use invites or SCIM.";
    return undefined;
  };

  const newMember: NewMember = (fields) => {
    const now = iso();
    return { id: randomUUID(), ...fields, scim_managed: false, created_at: now, updated_at: now };
  };

  /** Replies 422 for an invalid body; otherwise hands back the parsed value. */
  const valid = <T>(parsed: Parsed<T>, reply: FastifyReply): T | undefined => {
    if (parsed.ok) return parsed.value;
    void reply.code(422).send({ detail: parsed.issues });
    return undefined;
  };
  const conflict = (reply: FastifyReply, detail: string) => reply.code(409).send({ detail });
  return { ctx, iso, stateOf, isDefault, accessOf, info, refusal, newMember, valid, conflict };
}
