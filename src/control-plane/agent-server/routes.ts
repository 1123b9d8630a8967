import type { FastifyInstance } from "fastify";
import { createRouteKit, type AgentRoutesDeps } from "./route-kit.js";
import { registerAssistantRoutes } from "./assistants/assistant-routes.js";
import { registerAssistantVersionRoutes } from "./assistants/assistant-versions.js";
import { registerStoreRoutes } from "./memory/memory-store-routes.js";
import { registerCronRoutes } from "./crons/cron-routes.js";
import { registerRunRoutes } from "./runs/run-routes.js";
import { registerStateRoutes } from "./threads/state-routes.js";
import { registerStreamRoutes } from "./streaming/stream-routes.js";
import { registerThreadRoutes } from "./threads/thread-routes.js";
import { registerThreadStreamRoutes } from "./threads/thread-stream-routes.js";
import { registerThreadSearchRoutes } from "./threads/thread-search.js";

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
