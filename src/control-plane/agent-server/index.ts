import type { FastifyInstance } from "fastify";
import type { ControlPlaneContext, StatefulModule } from "../context.js";
import { registerAgentRoutes } from "./routes.js";
import { createScheduler } from "./scheduler.js";
import { createThreadStore } from "./store.js";

/**
 * The simulated agent server served for every deployment at `/agents/{deployment_id}`: threads,
 * runs of the one graph `agent` with the four multitask strategies, join, cancel and state.
 */
export function createAgentServerModule(ctx: ControlPlaneContext): {
  register(app: FastifyInstance): void;
  state: StatefulModule;
} {
  const store = createThreadStore();
  const scheduler = createScheduler({
    clock: ctx.clock,
    runSeconds: ctx.runSeconds,
    // A run that ends in the background is persisted by the next commit at the latest; a failed
    // background commit must not crash the server, and the next write retries it.
    onChange: () => void ctx.commit().catch(() => undefined),
  });
  // Runs restored before the server is ready resume only once it is: by then ctx.commit persists.
  let ready = false;
  return {
    register(app) {
      registerAgentRoutes(app, { ctx, store, scheduler });
      app.addHook("onReady", async () => {
        ready = true;
        scheduler.resume(store.all());
      });
      // Before connections drain: release waiting joins and stop timers; runs resume on restart.
      app.addHook("preClose", async () => scheduler.shutdown());
    },
    state: {
      name: "agent-server",
      snapshot: () => store.snapshot(),
      restore: (data) => {
        store.restore(data);
        if (ready) scheduler.resume(store.all());
      },
    },
  };
}
