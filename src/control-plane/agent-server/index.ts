import type { FastifyInstance } from "fastify";
import type { ControlPlaneContext, StatefulModule } from "../context.js";

// Contract placeholder: replaced by the real module. The server calls register() once and
// includes `state` in its persisted snapshot.
export function createAgentServerModule(_ctx: ControlPlaneContext): {
  register(app: FastifyInstance): void;
  state: StatefulModule;
} {
  return {
    register: () => undefined,
    state: { name: "agent-server", snapshot: () => ({}), restore: () => undefined },
  };
}
