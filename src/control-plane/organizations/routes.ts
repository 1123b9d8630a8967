import type { FastifyInstance } from "fastify";
import { registerInviteRoutes, registerMemberRoutes } from "./member-routes.js";
import { registerScimRoute, registerSignInRoute } from "./provisioning-routes.js";
import { orgRouteKit, type OrganizationRoutesDeps } from "./route-kit.js";
import { registerSettingsRoutes } from "./settings-routes.js";

export type { OrganizationRoutesDeps } from "./route-kit.js";

/** The platform API answers organization routes under both spellings. */
const ORGANIZATION_PREFIXES = ["/api/v1/organizations/current", "/api/v1/orgs/current"] as const;

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
