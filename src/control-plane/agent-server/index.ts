import type { FastifyInstance } from "fastify";
import type { ControlPlaneContext, StatefulModule } from "../context.js";
import { createAssistantStore, type AssistantRecord } from "./assistants/assistant-store.js";
import { createMemoryStore, readStoreItems } from "./memory/memory-store.js";
import { createCronStore, readCrons } from "./crons/cron-store.js";
import { createCronTicker } from "./crons/cron-ticker.js";
import { registerAgentRoutes, type AgentRoutesDeps } from "./routes.js";
import { createRunEvents, type RunEvents } from "./runs/run-events.js";
import { createScheduler, type Scheduler } from "./runs/scheduler.js";
import type { OpenStreams } from "./streaming/sse.js";
import { createThreadStore, readAssistants, type ThreadStore } from "./store.js";
import { emitRunEnded, emitRunStarted } from "./streaming/stream-events.js";
import { createStreamFrames } from "./streaming/stream-frames.js";
import { createThreadEvents } from "./threads/thread-events.js";
import { createWebhookSender, type WebhookSender } from "./runs/webhook.js";

/**
 * The simulated agent server served for every deployment at `/agents/{deployment_id}`: assistants
 * of the one graph `agent`, threads, runs (streamed or not, on a thread or stateless) with the
 * four multitask strategies, join, cancel, state and history; interrupts and state edits; the store.
 */
export function createAgentServerModule(ctx: ControlPlaneContext): {
  register(app: FastifyInstance): void;
  state: StatefulModule;
} {
  const store = createThreadStore();
  const assistants = createAssistantStore();
  const items = createMemoryStore();
  const crons = createCronStore();
  const cronFire = { fire: async () => undefined } as AgentRoutesDeps["cronFire"];
  const cronTicker = createCronTicker(ctx.clock, crons, (deploymentId, cron) =>
    cronFire.fire(deploymentId, cron),
  );
  const threadEvents = createThreadEvents();
  const events = createRunEvents(undefined, {
    event: (deploymentId, threadId, runId, event) =>
      threadEvents.fromRun(deploymentId, threadId, runId, event),
    drop: (deploymentId, threadId, runId) => threadEvents.dropRun(deploymentId, threadId, runId),
  });
  const openStreams: OpenStreams = new Set();
  const webhooks = createWebhookSender(ctx.webhookAllowHosts);
  const scheduler = createRunScheduler(ctx, store, events, webhooks);
  // Runs restored before the server is ready resume only once it is: by then ctx.commit persists.
  let ready = false;
  return {
    register(app) {
      registerAgentRoutes(app, {
        ctx,
        store,
        scheduler,
        events,
        threadEvents,
        assistants,
        items,
        crons,
        cronTicker,
        cronFire,
        openStreams,
      });
      app.addHook("onReady", async () => {
        ready = true;
        scheduler.resume(store.all());
        cronTicker.armAll();
      });
      // Before connections drain: end open event streams, release waiting joins and stop timers;
      // runs resume on restart.
      app.addHook("preClose", async () => {
        for (const end of [...openStreams]) end();
        scheduler.shutdown();
        webhooks.stop();
        cronTicker.stop();
      });
    },
    state: agentServerState({ store, assistants, items, crons, cronTicker, scheduler }, () => ready),
  };
}

/** Starts and ends runs: their events, stream frames and webhooks; a temporary thread goes with its last run. */
function createRunScheduler(
  ctx: ControlPlaneContext,
  store: ThreadStore,
  events: RunEvents,
  webhooks: WebhookSender,
): Scheduler {
  const frames = createStreamFrames(events, () => new Date(ctx.clock.now()).toISOString());
  return createScheduler({
    clock: ctx.clock,
    runSeconds: ctx.runSeconds,
    observer: {
      started(thread, run, task) {
        // A run resumed after a restart lost its log with the old process: this is its 2nd attempt.
        const deploymentId = store.deploymentOf(thread);
        if (events.get(run.run_id) === undefined && deploymentId !== undefined)
          events.open(deploymentId, thread.thread_id, run.run_id, 2);
        emitRunStarted(events, thread, run);
        frames.started(thread, run, task);
      },
      ended(thread, run) {
        frames.ended(thread, run);
        emitRunEnded(events, thread, run);
        webhooks.send(thread, run, new Date(ctx.clock.now()).toISOString());
        if (thread.temporary && !thread.runs.some((other) => other !== run && other.status === "pending"))
          store.remove(thread);
      },
    },
    // A run that ends in the background is persisted by the next commit at the latest; a failed
    // background commit must not crash the server, and the next write retries it.
    onChange: () => void ctx.commit().catch(() => undefined),
  });
}

type StatefulParts = Pick<
  AgentRoutesDeps,
  "store" | "assistants" | "items" | "crons" | "cronTicker" | "scheduler"
>;

/** The agent server's part of the saved state; a restore after start resumes runs and crons. */
function agentServerState(
  { store, assistants, items, crons, cronTicker, scheduler }: StatefulParts,
  ready: () => boolean,
): StatefulModule {
  return {
    name: "agent-server",
    snapshot: () => ({
      ...store.snapshot(),
      assistants: JSON.parse(JSON.stringify(assistants.snapshot())) as Record<string, AssistantRecord[]>,
      store: items.snapshot(),
      crons: crons.snapshot(),
    }),
    restore: (data) => {
      store.restore(data);
      assistants.restore(readAssistants(data));
      items.restore(readStoreItems(data));
      cronTicker.stop();
      crons.restore(readCrons(data));
      if (ready()) scheduler.resume(store.all());
      if (ready()) cronTicker.armAll();
    },
  };
}
