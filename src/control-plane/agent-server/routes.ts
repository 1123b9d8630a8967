import type { FastifyInstance } from "fastify";
import { createRouteKit, type AgentRoutesDeps } from "./route-kit.js";
import { registerAssistantRoutes } from "./assistant-routes.js";
import { registerAssistantVersionRoutes } from "./assistant-versions.js";
import { registerStoreRoutes } from "./memory-store-routes.js";
import { registerCronRoutes } from "./cron-routes.js";
import { registerRunRoutes } from "./run-routes.js";
import { registerStateRoutes } from "./state-routes.js";
import { registerStreamRoutes } from "./stream-routes.js";
import { registerThreadRoutes } from "./thread-routes.js";
import { registerThreadStreamRoutes } from "./thread-stream-routes.js";
import { registerThreadSearchRoutes } from "./thread-search.js";

export { type AgentRoutesDeps } from "./route-kit.js";

/** Every route of the simulated agent server, under `/agents/{deployment_id}`. */
export function registerAgentRoutes(app: FastifyInstance, deps: AgentRoutesDeps): void {
  const kit = createRouteKit(deps);
  registerThreadRoutes(app, deps, kit);
  registerStateRoutes(app, deps, kit);
  registerThreadSearchRoutes(app, deps, kit);
  registerAssistantRoutes(app, deps, kit);
  registerAssistantVersionRoutes(app, deps, kit);
  registerRunRoutes(app, deps, kit);
  registerStreamRoutes(app, deps, kit);
  registerThreadStreamRoutes(app, deps, kit);
  registerStoreRoutes(app, deps, kit);
  registerCronRoutes(app, deps, kit);
}
