import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { requireUuid } from "../http/paging.js";
import type { RouteFlags } from "../http/request-guards.js";
import type { OrgRouteKit } from "./route-kit.js";
import { parsePerson } from "./validation.js";

// The organization's routes for people an administrator adds: invites and members.

export function registerInviteRoutes(
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

export function registerMemberRoutes(
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
