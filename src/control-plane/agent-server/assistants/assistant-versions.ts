import type { FastifyInstance } from "fastify";
import type { AssistantRecord } from "./assistant-store.js";
import {
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { isObject, type ValidationIssue } from "../validation.js";

/**
 * Assistant versions (SDK assistants.getVersions / setLatest): every create and patch keeps a
 * version of the assistant's graph, config, context, metadata, name and description; setting an
 * older one as latest makes the assistant that version again (a later patch numbers on from the
 * highest version).
 */

export type AssistantVersion = Omit<AssistantRecord, "updated_at" | "versions">;

export function versionOf(assistant: AssistantRecord): AssistantVersion {
  const { versions: _versions, updated_at: _updated, ...version } = structuredClone(assistant);
  return version;
}

/** The assistant as the API answers it (without its kept versions). */
export function assistantView(assistant: AssistantRecord): Omit<AssistantRecord, "versions"> {
  const { versions: _versions, ...view } = assistant;
  return structuredClone(view);
}

/** Records a new version after a patch: the next number after the highest kept. */
export function keepVersion(assistant: AssistantRecord): void {
  const versions = assistant.versions ?? [versionOf(assistant)];
  assistant.version = Math.max(...versions.map((v) => v.version)) + 1;
  assistant.versions = [...versions, versionOf(assistant)];
}

const intField = (
  body: Record<string, unknown>,
  field: string,
  fallback: number,
  min: number,
  issues: ValidationIssue[],
) => {
  const value = body[field] ?? fallback;
  if (
    typeof value === "number" &&
    Number.isInteger(value) &&
    value >= min &&
    value <= (field === "offset" ? Number.MAX_SAFE_INTEGER : 1000)
  )
    return value;
  issues.push({ loc: ["body", field], msg: `Input should be an integer from ${min}`, type: "int_parsing" });
  return fallback;
};

export function registerAssistantVersionRoutes(
  app: FastifyInstance,
  { ctx, assistants }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const { opts, path } = kit;
  const find = (request: Req) => assistants.resolve(request.params.deploymentId, request.params.assistantId);

  app.post<Route>(path("/assistants/:assistantId/versions"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const issues: ValidationIssue[] = [];
    const limit = intField(body, "limit", 10, 1, issues);
    const offset = intField(body, "offset", 0, 0, issues);
    const metadata = body.metadata ?? {};
    if (!isObject(metadata))
      issues.push({
        loc: ["body", "metadata"],
        msg: "Input should be a valid dictionary",
        type: "dict_type",
      });
    if (issues.length > 0) return invalid(reply, issues);
    const assistant = find(request);
    if (assistant === undefined) return notFound(reply, `Assistant ${request.params.assistantId} not found.`);
    const filter = isObject(metadata) ? metadata : {};
    return (assistant.versions ?? [versionOf(assistant)])
      .filter((v) =>
        Object.entries(filter).every(([k, want]) => JSON.stringify(v.metadata[k]) === JSON.stringify(want)),
      )
      .sort((a, b) => b.version - a.version)
      .slice(offset, offset + limit)
      .map((v) => structuredClone(v));
  });

  app.post<Route>(path("/assistants/:assistantId/latest"), opts, async (request: Req, reply) => {
    const wanted = isObject(request.body) ? request.body.version : undefined;
    if (typeof wanted !== "number" || !Number.isInteger(wanted))
      return invalid(reply, [
        { loc: ["body", "version"], msg: "Input should be a valid integer", type: "int_type" },
      ]);
    const assistant = find(request);
    if (assistant === undefined) return notFound(reply, `Assistant ${request.params.assistantId} not found.`);
    const version = (assistant.versions ?? [versionOf(assistant)]).find((v) => v.version === wanted);
    if (version === undefined)
      return notFound(
        reply,
        `Assistant ${assistant.assistant_id} has no version ${wanted}; list them with POST /assistants/{id}/versions.`,
      );
    if (assistant.metadata.created_by === "system") return assistantView(assistant);
    Object.assign(assistant, structuredClone(version), { updated_at: kit.iso() });
    await ctx.commit();
    return assistantView(assistant);
  });
}
