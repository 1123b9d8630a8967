import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ControlPlaneContext } from "../context.js";
import { canonicalUuid } from "../http/uuid.js";
import { queryInteger } from "../http/paging.js";
import type { AssistantStore } from "./assistants/assistant-store.js";
import type { MemoryStore } from "./memory/memory-store.js";
import type { CronRecord, CronStore } from "./crons/cron-store.js";
import type { CronTicker } from "./crons/cron-ticker.js";
import type { RunEvents } from "./runs/run-events.js";
import type { Scheduler } from "./runs/scheduler.js";
import type { OpenStreams } from "./streaming/sse.js";
import type { ThreadStore } from "./store.js";
import type { ThreadEvents } from "./threads/thread-events.js";
import type { RunRecord, ThreadRecord } from "./types.js";
import type { ValidationIssue } from "./validation.js";

/** What the agent-server route files share: request types, lookups answering 404, 422 replies. */

const AGENTS_PREFIX = "/agents/:deploymentId";
/** Path ids read in every spelling of a uuid (`assistantId` may be a graph name: resolve reads it). */
const ID_PARAMS = ["threadId", "runId", "cronId", "checkpointId"] as const;

/** threadId is undefined on the stateless routes (`/runs/...`). */
export type Params = {
  deploymentId: string;
  threadId: string;
  runId: string;
  assistantId: string;
  checkpointId: string;
  cronId: string;
};
export type Route = { Params: Params; Querystring: Record<string, string | undefined> };
export type Req = FastifyRequest<Route>;

export type AgentRoutesDeps = {
  ctx: ControlPlaneContext;
  store: ThreadStore;
  scheduler: Scheduler;
  events: RunEvents;
  /** What thread streams send (GET /threads/{tid}/stream). */
  threadEvents: ThreadEvents;
  assistants: AssistantStore;
  /** Items of the store API (client.store). */
  items: MemoryStore;
  crons: CronStore;
  cronTicker: CronTicker;
  /** What a cron's tick does: set by the cron routes, which can create runs. */
  cronFire: { fire: (deploymentId: string, cron: CronRecord) => Promise<void> };
  /** SSE responses in progress, ended when the server closes. */
  openStreams: OpenStreams;
};

export const notFound = (reply: FastifyReply, detail: string) => reply.code(404).send({ detail });
export const invalid = (reply: FastifyReply, detail: ValidationIssue[]) => reply.code(422).send({ detail });

/**
 * An optional integer query parameter, read as the control plane's are (FastAPI's lax str → int:
 * queryInteger); pushes the issue when malformed or out of range. It was read with Number(), so
 * `0x10`, ` 5` and an empty value were taken as 16, 5 and 0.
 */
export function intQuery(
  query: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  issues: ValidationIssue[],
): number {
  const value = queryInteger(query, name, fallback, min, max);
  if (typeof value === "number") return value;
  issues.push(value);
  return fallback;
}

export type RouteKit = ReturnType<typeof createRouteKit>;

export function createRouteKit({ ctx, store }: AgentRoutesDeps) {
  const iso = () => new Date(ctx.clock.now()).toISOString();

  // Answers 404 for a deployment the caller's tenant does not own (or that does not exist).
  // A UUID is case-insensitive (RFC 9562) and has other spellings (32 hex digits, braces, urn:uuid:);
  // the deployment routes read them all: the id is made canonical here, before any handler keys the
  // agent server's state by it.
  const deploymentGuard = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = request.params as Params;
    params.deploymentId = canonicalUuid(params.deploymentId) ?? params.deploymentId.toLowerCase();
    // The thread, run, cron and checkpoint ids of the path too: every record is keyed by the canonical form.
    for (const name of ID_PARAMS) {
      const value = params[name] as string | undefined;
      if (value !== undefined) params[name] = canonicalUuid(value) ?? value;
    }
    const { deploymentId } = params;
    if (!ctx.deploymentExists(ctx.tenantOf(request), deploymentId)) {
      return notFound(reply, `Deployment ID ${deploymentId} not found.`);
    }
  };
  const opts = { preHandler: deploymentGuard };
  const path = (suffix: string) => `${AGENTS_PREFIX}${suffix}`;

  const newThread = (threadId: string, metadata: Record<string, unknown>): ThreadRecord => {
    const now = iso();
    return {
      thread_id: threadId,
      created_at: now,
      updated_at: now,
      state_updated_at: now,
      metadata,
      checkpoint_id: randomUUID(),
      messages: [],
      runs: [],
    };
  };

  const findThread = (request: Req, reply: FastifyReply): ThreadRecord | undefined => {
    const thread = store.get(request.params.deploymentId, request.params.threadId);
    if (thread === undefined) void notFound(reply, `Thread ${request.params.threadId} not found.`);
    return thread;
  };

  const findRun = (request: Req, reply: FastifyReply): [ThreadRecord, RunRecord] | undefined => {
    const thread = findThread(request, reply);
    if (thread === undefined) return undefined;
    const run = thread.runs.find((candidate) => candidate.run_id === request.params.runId);
    if (run === undefined) {
      void notFound(reply, `Run ${request.params.runId} not found on thread ${thread.thread_id}.`);
      return undefined;
    }
    return [thread, run];
  };

  return { iso, opts, path, newThread, findThread, findRun };
}
