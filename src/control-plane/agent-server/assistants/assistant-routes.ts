import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { type AssistantRecord, type AssistantStore } from "./assistant-store.js";
import { GRAPH_ID } from "../graph.js";
import {
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { parseAssistantCreate, parseAssistantPatch, parseAssistantSearch } from "./assistant-validation.js";
import { assistantView, keepVersion, versionOf } from "./assistant-versions.js";
import { pick } from "../select.js";

/**
 * Assistants (docs/control-plane.md "Assistants"): the graph's system assistant and assistants
 * clients create for it with their own config and metadata. A path may name the graph instead of
 * an id, as on the open-source server.
 */
export function registerAssistantRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  registerAssistantCreate(app, deps, kit);
  registerAssistantSearch(app, deps, kit);
  registerAssistantItem(app, deps, kit);
  registerAssistantGraph(app, deps, kit);
}

/** The assistant a path names (by id or graph), or undefined once 404 is sent. */
function find(assistants: AssistantStore, request: Req, reply: FastifyReply): AssistantRecord | undefined {
  const found = assistants.resolve(request.params.deploymentId, request.params.assistantId);
  if (found === undefined) void notFound(reply, `Assistant ${request.params.assistantId} not found.`);
  return found;
}

const unknownGraph = (reply: FastifyReply, graphId: string) =>
  notFound(reply, `Graph ${graphId} not found; this deployment serves one graph: "${GRAPH_ID}".`);

function registerAssistantCreate(
  app: FastifyInstance,
  { ctx, assistants }: AgentRoutesDeps,
  { opts, path, iso }: RouteKit,
): void {
  app.post<Route>(path("/assistants"), opts, async (request: Req, reply) => {
    const parsed = parseAssistantCreate(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const body = parsed.value;
    if (body.graph_id !== GRAPH_ID) return unknownGraph(reply, body.graph_id);
    const { deploymentId } = request.params;
    const existing =
      body.assistant_id === null ? undefined : assistants.resolve(deploymentId, body.assistant_id);
    if (existing !== undefined) {
      if (body.if_exists === "do_nothing") return assistantView(existing);
      return reply.code(409).send({
        detail: `Assistant ${existing.assistant_id} already exists; send if_exists "do_nothing" to reuse it.`,
      });
    }
    const now = iso();
    const assistant: AssistantRecord = {
      assistant_id: body.assistant_id ?? randomUUID(),
      graph_id: body.graph_id,
      config: body.config,
      context: body.context,
      metadata: body.metadata,
      name: body.name ?? "Untitled",
      description: body.description,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    assistant.versions = [versionOf(assistant)];
    assistants.put(deploymentId, assistant);
    await ctx.commit();
    return assistantView(assistant);
  });
}

/** The assistants a search body selects, sorted as it asks; or the body's issues. */
function searchAssistants(assistants: AssistantStore, request: Req) {
  const query = parseAssistantSearch(request.body);
  if (!query.ok) return query;
  const { graph_id, metadata, name, sort_by, sort_order } = query.value;
  const matches = assistants
    .list(request.params.deploymentId)
    .filter((a) => graph_id === undefined || a.graph_id === graph_id)
    .filter((a) => name === undefined || a.name.toLowerCase().includes(name.toLowerCase()))
    .filter((a) =>
      Object.entries(metadata).every(([k, v]) => JSON.stringify(a.metadata[k]) === JSON.stringify(v)),
    )
    .sort((a, b) => String(a[sort_by]).localeCompare(String(b[sort_by])) * (sort_order === "asc" ? 1 : -1));
  return { ok: true as const, matches, ...query.value };
}

function registerAssistantSearch(
  app: FastifyInstance,
  { assistants }: AgentRoutesDeps,
  { opts, path }: RouteKit,
): void {
  app.post<Route>(path("/assistants/search"), opts, async (request: Req, reply) => {
    const found = searchAssistants(assistants, request);
    if (!found.ok) return invalid(reply, found.issues);
    const { matches, offset, limit } = found;
    void reply.header("x-pagination-total", String(matches.length));
    if (offset + limit < matches.length) void reply.header("x-pagination-next", String(offset + limit));
    return matches.slice(offset, offset + limit).map((a) => pick(assistantView(a), found.select));
  });

  app.post<Route>(path("/assistants/count"), opts, async (request: Req, reply) => {
    const found = searchAssistants(assistants, request);
    return found.ok ? found.matches.length : invalid(reply, found.issues);
  });
}

/** One assistant: read, change (merging metadata) and delete; the system assistant stays as it is. */
function registerAssistantItem(
  app: FastifyInstance,
  { ctx, assistants }: AgentRoutesDeps,
  { opts, path, iso }: RouteKit,
): void {
  app.get<Route>(path("/assistants/:assistantId"), opts, async (request: Req, reply) => {
    const assistant = find(assistants, request, reply);
    return assistant === undefined ? reply : assistantView(assistant);
  });

  app.patch<Route>(path("/assistants/:assistantId"), opts, async (request: Req, reply) => {
    const assistant = find(assistants, request, reply);
    if (assistant === undefined) return reply;
    if (assistant.metadata.created_by === "system")
      return reply.code(409).send({
        detail: "The graph's system assistant cannot be changed; create an assistant of the graph instead.",
      });
    const parsed = parseAssistantPatch(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const patch = parsed.value;
    if (patch.graph_id !== undefined && patch.graph_id !== GRAPH_ID)
      return unknownGraph(reply, patch.graph_id);
    Object.assign(assistant, {
      ...(patch.config !== undefined && { config: patch.config }),
      ...(patch.context !== undefined && { context: patch.context }),
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.description !== undefined && { description: patch.description }),
      metadata: { ...assistant.metadata, ...patch.metadata }, // merged, as the open-source server does
      updated_at: iso(),
    });
    keepVersion(assistant);
    await ctx.commit();
    return assistantView(assistant);
  });

  app.delete<Route>(path("/assistants/:assistantId"), opts, async (request: Req, reply) => {
    const assistant = find(assistants, request, reply);
    if (assistant === undefined) return reply;
    if (assistant.metadata.created_by === "system")
      return reply.code(409).send({
        detail: "The graph's system assistant cannot be deleted; it serves runs that name the graph.",
      });
    assistants.delete(request.params.deploymentId, assistant.assistant_id);
    await ctx.commit();
    return reply.code(204).send();
  });
}

function registerAssistantGraph(
  app: FastifyInstance,
  { assistants }: AgentRoutesDeps,
  { opts, path }: RouteKit,
): void {
  app.get<Route>(path("/assistants/:assistantId/graph"), opts, async (request: Req, reply) =>
    find(assistants, request, reply) === undefined ? reply : GRAPH_DRAWING,
  );
  app.get<Route>(path("/assistants/:assistantId/subgraphs"), opts, async (request: Req, reply) =>
    find(assistants, request, reply) === undefined ? reply : {},
  );
  app.get<Route>(path("/assistants/:assistantId/schemas"), opts, async (request: Req, reply) =>
    find(assistants, request, reply) === undefined ? reply : GRAPH_SCHEMAS,
  );
}

/** The graph in the shape of LangGraph's drawable graph: start goes to `agent`, or to `review` for "approve?". */
const GRAPH_DRAWING = {
  nodes: [
    { id: "__start__", type: "schema", data: "__start__" },
    { id: "agent", type: "runnable", data: { id: ["plumb", "agent"], name: "agent" } },
    { id: "review", type: "runnable", data: { id: ["plumb", "review"], name: "review" } },
    { id: "__end__", type: "schema", data: "__end__" },
  ],
  edges: [
    { source: "__start__", target: "agent", conditional: true },
    { source: "__start__", target: "review", conditional: true },
    { source: "agent", target: "__end__" },
    { source: "review", target: "__end__" },
  ],
};

const MESSAGES_STATE = {
  type: "object",
  title: "AgentState",
  properties: { messages: { type: "array", items: { type: "object" }, title: "Messages" } },
};

const GRAPH_SCHEMAS = {
  graph_id: GRAPH_ID,
  input_schema: MESSAGES_STATE,
  output_schema: MESSAGES_STATE,
  state_schema: MESSAGES_STATE,
  config_schema: { type: "object", title: "Configurable", properties: {} },
  context_schema: null,
};
