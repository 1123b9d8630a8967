import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { scheduleProblem, type CronRecord, type CronStore } from "./cron-store.js";
import { createRunStarter } from "../runs/run-create.js";
import {
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { parseSelect, pick } from "../select.js";
import { sameId } from "../../http/uuid.js";
import { isObject, optionalEnum, parseRunCreate, type ValidationIssue } from "../validation.js";

/**
 * Crons (docs/control-plane.md "Crons"), as the hosted service serves them: create on a thread
 * or stateless, patch, delete, search, count. Each tick creates the run the cron's payload
 * describes, as POST /runs would.
 */

const CRON_FIELDS = ["schedule", "end_time", "enabled", "on_run_completed", "metadata"] as const;
const SORT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "created_at",
  "updated_at",
  "next_run_date",
] as const;
const SELECT_FIELDS = [...SORT_FIELDS, "end_time", "schedule", "user_id", "payload", "metadata", "enabled"];

function parseCronFields(body: Record<string, unknown>, issues: ValidationIssue[], creating: boolean) {
  const problem = body.schedule === undefined && !creating ? undefined : scheduleProblem(body.schedule);
  if (problem !== undefined) issues.push({ loc: ["body", "schedule"], msg: problem, type: "value_error" });
  const end = body.end_time;
  if (end !== undefined && end !== null && (typeof end !== "string" || Number.isNaN(Date.parse(end))))
    issues.push({ loc: ["body", "end_time"], msg: "Input should be a date-time", type: "datetime_parsing" });
  if (body.enabled !== undefined && body.enabled !== null && typeof body.enabled !== "boolean")
    issues.push({ loc: ["body", "enabled"], msg: "Input should be a valid boolean", type: "bool_type" });
  const onCompleted = optionalEnum(body, "on_run_completed", ["delete", "keep"] as const, "delete", issues);
  return { onCompleted };
}

export function registerCronRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  const { opts, path } = kit;
  const start = createRunStarter(deps, kit);
  deps.cronFire.fire = async (deploymentId, cron) => {
    const body = { ...cron.payload, on_completion: cron.on_run_completed };
    await start({ deploymentId, threadId: cron.thread_id ?? undefined }, body);
  };
  app.post<Route>(path("/runs/crons"), opts, (request: Req, reply) =>
    createCron(deps, kit.iso, request, reply, null),
  );
  app.post<Route>(path("/threads/:threadId/runs/crons"), opts, (request: Req, reply) =>
    createCron(deps, kit.iso, request, reply, request.params.threadId),
  );
  registerCronItemRoutes(app, deps, kit);
  registerCronSearchRoutes(app, deps, kit);
}

/** POST /runs/crons (threadId null) and /threads/{tid}/runs/crons: checks, stores and arms the cron. */
async function createCron(
  { ctx, crons, cronTicker, store, assistants }: AgentRoutesDeps,
  iso: () => string,
  request: Req,
  reply: FastifyReply,
  threadId: string | null,
) {
  const body = isObject(request.body) ? request.body : {};
  const issues: ValidationIssue[] = [];
  const { onCompleted } = parseCronFields(body, issues, true);
  const payload = Object.fromEntries(
    Object.entries(body).filter(([k]) => !(CRON_FIELDS as readonly string[]).includes(k)),
  );
  const run = parseRunCreate(payload, ctx.webhookAllowHosts);
  if (!run.ok) issues.push(...run.issues);
  if (issues.length > 0 || !run.ok) return invalid(reply, issues);
  const { deploymentId } = request.params;
  if (threadId !== null && store.get(deploymentId, threadId) === undefined)
    return notFound(reply, `Thread ${threadId} not found.`);
  const assistant = assistants.resolve(deploymentId, run.value.assistant_id);
  if (assistant === undefined) return notFound(reply, `Assistant ${run.value.assistant_id} not found.`);
  const now = iso();
  const cron: CronRecord = {
    cron_id: randomUUID(),
    assistant_id: assistant.assistant_id,
    thread_id: threadId,
    schedule: body.schedule as string,
    payload,
    metadata: isObject(body.metadata) ? body.metadata : {},
    end_time: typeof body.end_time === "string" ? new Date(body.end_time).toISOString() : null,
    enabled: body.enabled !== false,
    on_run_completed: onCompleted,
    user_id: null,
    created_at: now,
    updated_at: now,
    next_run_date: null,
  };
  crons.put(deploymentId, cron);
  cronTicker.arm(deploymentId, cron);
  await ctx.commit();
  return structuredClone(cron);
}

function findCron(crons: CronStore, request: Req, reply: FastifyReply): CronRecord | undefined {
  const { cronId } = request.params;
  const cron = crons.get(request.params.deploymentId, cronId);
  if (cron === undefined) void notFound(reply, `Cron ${cronId} not found.`);
  return cron;
}

/** PATCH and DELETE of one cron; both re-arm or disarm its ticker. */
function registerCronItemRoutes(
  app: FastifyInstance,
  { ctx, crons, cronTicker }: AgentRoutesDeps,
  { opts, path, iso }: RouteKit,
): void {
  app.patch<Route>(path("/runs/crons/:cronId"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const issues: ValidationIssue[] = [];
    parseCronFields(body, issues, false);
    if (issues.length > 0) return invalid(reply, issues);
    const cron = findCron(crons, request, reply);
    if (cron === undefined) return reply;
    if (typeof body.schedule === "string") cron.schedule = body.schedule;
    if (body.end_time !== undefined)
      cron.end_time = typeof body.end_time === "string" ? new Date(body.end_time).toISOString() : null;
    if (typeof body.enabled === "boolean") cron.enabled = body.enabled;
    if (body.on_run_completed === "delete" || body.on_run_completed === "keep")
      cron.on_run_completed = body.on_run_completed;
    if (isObject(body.metadata)) cron.metadata = { ...cron.metadata, ...body.metadata };
    for (const field of ["input", "config", "context", "webhook", "interrupt_before", "interrupt_after"])
      if (body[field] !== undefined) cron.payload[field] = body[field];
    cron.updated_at = iso();
    cronTicker.arm(request.params.deploymentId, cron);
    await ctx.commit();
    return structuredClone(cron);
  });

  app.delete<Route>(path("/runs/crons/:cronId"), opts, async (request: Req, reply) => {
    const cron = findCron(crons, request, reply);
    if (cron === undefined) return reply;
    cronTicker.disarm(cron.cron_id);
    crons.delete(request.params.deploymentId, cron.cron_id);
    await ctx.commit();
    return reply.code(204).send();
  });
}

/** The crons a search or count body selects (by assistant, thread, enabled), in store order. */
function matchingCrons({ crons, assistants }: AgentRoutesDeps, request: Req, body: Record<string, unknown>) {
  return crons
    .list(request.params.deploymentId)
    .filter(
      (c) =>
        typeof body.assistant_id !== "string" ||
        c.assistant_id === assistants.resolve(request.params.deploymentId, body.assistant_id)?.assistant_id,
    )
    .filter((c) => typeof body.thread_id !== "string" || c.thread_id === sameId(body.thread_id))
    .filter((c) => typeof body.enabled !== "boolean" || c.enabled === body.enabled);
}

function registerCronSearchRoutes(
  app: FastifyInstance,
  deps: AgentRoutesDeps,
  { opts, path }: RouteKit,
): void {
  app.post<Route>(path("/runs/crons/search"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const issues: ValidationIssue[] = [];
    const sortBy = optionalEnum(body, "sort_by", SORT_FIELDS, "created_at", issues);
    const order =
      optionalEnum(body, "sort_order", ["asc", "desc"] as const, "desc", issues) === "asc" ? 1 : -1;
    const select = parseSelect(body.select, SELECT_FIELDS, issues);
    const limit = typeof body.limit === "number" ? body.limit : 10;
    const offset = typeof body.offset === "number" ? body.offset : 0;
    if (issues.length > 0) return invalid(reply, issues);
    return matchingCrons(deps, request, body)
      .map((cron, index) => ({ cron, index }))
      .sort(
        (a, b) => (String(a.cron[sortBy]).localeCompare(String(b.cron[sortBy])) || a.index - b.index) * order,
      )
      .slice(offset, offset + limit)
      .map(({ cron }) => pick(structuredClone(cron), select));
  });

  app.post<Route>(
    path("/runs/crons/count"),
    opts,
    async (request: Req) => matchingCrons(deps, request, isObject(request.body) ? request.body : {}).length,
  );
}
