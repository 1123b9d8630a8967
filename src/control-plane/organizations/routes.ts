import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ControlPlaneContext } from "../context.js";
import { requireUuid } from "../http/paging.js";
import type { RouteFlags } from "../http/request-guards.js";
import { applyScimGroups, decideSignIn, effectiveAccess, type NewMember } from "./access.js";
import type { OrganizationStore } from "./store.js";
import type { Member, OrgState } from "./types.js";
import {
  parsePerson,
  parseScimUser,
  parseSettingsPatch,
  parseSignIn,
  parseSsoDefaultsPatch,
  type Parsed,
} from "./validation.js";

/** The platform API answers organization routes under both spellings. */
const ORGANIZATION_PREFIXES = ["/api/v1/organizations/current", "/api/v1/orgs/current"] as const;

export type OrganizationRoutesDeps = {
  ctx: ControlPlaneContext;
  store: OrganizationStore;
  selfHostedJitProvisioningEnabled: boolean;
};

/** What every organization route shares: the tenant's state, its access rules and the replies. */
type OrgRouteKit = {
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

export function registerOrganizationRoutes(app: FastifyInstance, deps: OrganizationRoutesDeps): void {
  const kit = orgRouteKit(deps);
  for (const prefix of ORGANIZATION_PREFIXES) {
    registerSettingsRoutes(app, prefix, kit);
    registerInviteRoutes(app, prefix, kit);
    registerMemberRoutes(app, prefix, kit);
    registerScimRoute(app, prefix, kit);
    registerSignInRoute(app, prefix, kit);
  }
}

function orgRouteKit({ ctx, store, selfHostedJitProvisioningEnabled }: OrganizationRoutesDeps): OrgRouteKit {
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

/** The organization, its onboarding settings and its SSO defaults. */
function registerSettingsRoutes(
  app: FastifyInstance,
  prefix: string,
  { ctx, stateOf, info, refusal, valid }: OrgRouteKit,
): void {
  // The organization itself (read by real tooling; not shown in the spec): the same as /info.
  app.get(prefix, async (request) => info(await stateOf(request)));
  app.get(`${prefix}/info`, async (request) => {
    const state = await stateOf(request);
    return info(state);
  });

  app.patch(`${prefix}/info`, async (request, reply) => {
    const patch = valid(parseSettingsPatch(request.body), reply);
    if (patch === undefined) return reply;
    const state = await stateOf(request);
    const refused = refusal(state, patch);
    if (refused !== undefined) return reply.code(400).send({ detail: refused });
    Object.assign(state.organization, patch);
    await ctx.commit();
    return info(state);
  });

  app.get(`${prefix}/sso-settings`, async (request) => ({ ...(await stateOf(request)).sso }));

  app.patch(`${prefix}/sso-settings`, async (request, reply) => {
    const patch = valid(parseSsoDefaultsPatch(request.body), reply);
    if (patch === undefined) return reply;
    const state = await stateOf(request);
    Object.assign(state.sso, patch);
    await ctx.commit();
    return { ...state.sso };
  });
}

function registerInviteRoutes(
  app: FastifyInstance,
  prefix: string,
  { ctx, iso, stateOf, accessOf, valid, conflict }: OrgRouteKit,
): void {
  app.get(`${prefix}/invites`, async (request) => (await stateOf(request)).invites);

  app.post(`${prefix}/invites`, async (request, reply) => {
    const body = valid(parsePerson(request.body), reply);
    if (body === undefined) return reply;
    const state = await stateOf(request);
    if (!accessOf(state).invites) {
      return reply.code(400).send({
        detail: `Invites are disabled for organization ${state.organization.display_name}: enable them with PATCH /api/v1/orgs/current/info {"invites_enabled": true}, or provision ${body.email} through SCIM.`,
      });
    }
    if (state.members.some((member) => member.email === body.email)) {
      return conflict(
        reply,
        `${body.email} is already a member of organization ${state.organization.display_name}.`,
      );
    }
    if (state.invites.some((invite) => invite.email === body.email)) {
      return conflict(reply, `${body.email} already has a pending invite; delete it first to change it.`);
    }
    const invite = { id: randomUUID(), ...body, created_at: iso() };
    state.invites.push(invite);
    await ctx.commit();
    return reply.code(201).send(invite);
  });

  const noBody = { config: { ignoresBody: true } satisfies RouteFlags };
  app.delete<{ Params: { invite_id: string } }>(
    `${prefix}/invites/:invite_id`,
    noBody,
    async (request, reply) => {
      // A uuid path parameter, as FastAPI types one: any of pydantic's spellings, else 422.
      const id = requireUuid(request.params.invite_id, "invite_id");
      const state = await stateOf(request);
      const before = state.invites.length;
      state.invites = state.invites.filter((invite) => invite.id !== id);
      if (state.invites.length === before) {
        return reply.code(404).send({ detail: `Invite ${id} not found.` });
      }
      await ctx.commit();
      return reply.code(204).send();
    },
  );
}

function registerMemberRoutes(
  app: FastifyInstance,
  prefix: string,
  { ctx, stateOf, newMember, valid, conflict }: OrgRouteKit,
): void {
  app.get(`${prefix}/members`, async (request) => (await stateOf(request)).members);

  // An administrator adds a user directly (always allowed, whatever the onboarding settings).
  app.post(`${prefix}/members`, async (request, reply) => {
    const body = valid(parsePerson(request.body), reply);
    if (body === undefined) return reply;
    const state = await stateOf(request);
    if (state.members.some((member) => member.email === body.email)) {
      return conflict(
        reply,
        `${body.email} is already a member of organization ${state.organization.display_name}.`,
      );
    }
    const member = newMember({ ...body, provisioned_by: "admin" });
    state.members.push(member);
    state.invites = state.invites.filter((invite) => invite.email !== body.email);
    await ctx.commit();
    return reply.code(201).send(member);
  });
}

/** SCIM provisioning: creates the member, or updates the workspaces of an existing one. */
function registerScimRoute(
  app: FastifyInstance,
  prefix: string,
  { ctx, iso, stateOf, newMember, valid }: OrgRouteKit,
): void {
  app.post(`${prefix}/scim/users`, async (request, reply) => {
    const body = valid(parseScimUser(request.body), reply);
    if (body === undefined) return reply;
    const state = await stateOf(request);
    const existing = state.members.find((member) => member.email === body.email);
    let member: Member;
    if (existing === undefined) {
      member = {
        ...newMember({
          email: body.email,
          org_role: "Organization User",
          workspaces: body.groups,
          provisioned_by: "scim",
        }),
        scim_managed: true,
      };
      state.members.push(member);
      state.invites = state.invites.filter((invite) => invite.email !== body.email);
    } else {
      member = existing;
      member.workspaces = applyScimGroups(member.workspaces, body.groups);
      member.scim_managed = true;
      member.updated_at = iso();
    }
    await ctx.commit();
    return reply.code(existing === undefined ? 201 : 200).send(member);
  });
}

function registerSignInRoute(
  app: FastifyInstance,
  prefix: string,
  { ctx, stateOf, accessOf, newMember, valid }: OrgRouteKit,
): void {
  app.post(`${prefix}/sso/sign-in`, async (request, reply) => {
    const body = valid(parseSignIn(request.body), reply);
    if (body === undefined) return reply;
    const state = await stateOf(request);
    const decision = decideSignIn(state, body.email, accessOf(state), newMember);
    if (decision.decision === "denied") return reply.code(403).send({ detail: decision.detail });
    if (decision.decision === "signed_in") return decision;
    state.members.push(decision.member);
    if (decision.via === "invite")
      state.invites = state.invites.filter((invite) => invite.id !== decision.invite.id);
    await ctx.commit();
    return decision;
  });
}
