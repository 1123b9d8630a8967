import type { FastifyInstance } from "fastify";
import { applyScimGroups, decideSignIn } from "./access.js";
import type { OrgRouteKit } from "./route-kit.js";
import type { Member } from "./types.js";
import { parseScimUser, parseSignIn } from "./validation.js";

// The organization's routes by which people join on their own: SCIM provisioning and SSO sign-in.

/** SCIM provisioning: creates the member, or updates the workspaces of an existing one. */
export function registerScimRoute(
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

export function registerSignInRoute(
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
