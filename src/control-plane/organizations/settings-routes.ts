import type { FastifyInstance } from "fastify";
import type { OrgRouteKit } from "./route-kit.js";
import { parseSettingsPatch, parseSsoDefaultsPatch } from "./validation.js";

// The organization's routes for its settings: /info and /sso-settings.

/** The organization, its onboarding settings and its SSO defaults. */
export function registerSettingsRoutes(
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
