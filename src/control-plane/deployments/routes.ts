import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../../clock.js";
import type { DeploymentCreateRequest } from "../../schema/deployment.js";
import { badRequest, HttpError, notFound, type RouteChecks, unprocessable } from "../http/http-errors.js";
import { lastQueryString, page, parsePaging, readPaging, requireUuid, uuidIssues } from "../http/paging.js";
import { FASTAPI_GET } from "../http/method-not-allowed.js";
import type { RouteFlags } from "../http/request-guards.js";
import type { ValidationIssue } from "../http/validation-errors.js";
import { checkDeploymentBody } from "./body-checks.js";
import { canonicalBodyIds, CreateBody, PatchBody } from "./body-schemas.js";
import { customUrlOf, type DeploymentRecord, type Timing } from "./record.js";
import { createDeploymentRenderer } from "./render.js";
import { registerPushRoute } from "./push.js";
import { formatRevision } from "./revisions.js";
import type { RuleEnv } from "./rules.js";
import { planCreate } from "./create-rules.js";
import { planPatch, type ServerPatchBody } from "./patch-rules.js";
import type { DeploymentStore } from "./store.js";

export type DeploymentRouteDeps = {
  store: DeploymentStore;
  env: RuleEnv;
  timing: Timing;
  clock: Clock;
  tenantOf(request: FastifyRequest): string;
  commit(): Promise<void>;
  baseUrl(): string;
};

type IdParams = { deployment_id: string };
const notFoundId = (id: string) => notFound(`Deployment ID ${id} not found.`);
const bodyChecks: RouteChecks = { bodyChecks: checkDeploymentBody };
const idPathChecks: RouteChecks = {
  ...bodyChecks,
  pathChecks: (params) => uuidIssues(params, ["deployment_id"]),
};
const JSON_TYPE = "application/json; charset=utf-8";

function reject(issues: ValidationIssue[]) {
  if (issues.length > 0) throw unprocessable(issues);
}

export function registerDeploymentRoutes(app: FastifyInstance, deps: DeploymentRouteDeps): void {
  const kit = deploymentRouteKit(deps);
  registerDeploymentCrud(app, deps, kit);
  registerRevisionRoutes(app, deps, kit);
  registerUploadUrlRoutes(app, deps, kit);
  registerPushRoute(app, deps);
}

type IdRequest = FastifyRequest<{ Params: IdParams }>;

/** What the deployment routes share: rendering a record as JSON and loading the one a path names. */
type DeploymentRouteKit = {
  json: (reply: FastifyReply, text: string) => FastifyReply;
  view: (reply: FastifyReply, record: DeploymentRecord, remember?: boolean) => FastifyReply;
  renderer: ReturnType<typeof createDeploymentRenderer>;
  /** The tenant's deployment, or 404. */
  load: (request: IdRequest) => DeploymentRecord;
  /** As load, and 400 while it is being deleted. */
  loadLive: (request: IdRequest) => DeploymentRecord;
};

function deploymentRouteKit(deps: DeploymentRouteDeps): DeploymentRouteKit {
  const { store, clock, timing } = deps;
  const renderer = createDeploymentRenderer(
    timing,
    () => deps.baseUrl(),
    (r) => store.version(r),
  );
  const json = (reply: FastifyReply, text: string) => reply.type(JSON_TYPE).send(text);
  const view = (reply: FastifyReply, record: DeploymentRecord, remember = true) =>
    json(reply, renderer.render(record, clock.now(), remember));
  const load = (request: FastifyRequest<{ Params: IdParams }>) => {
    const id = requireUuid(request.params.deployment_id, "deployment_id");
    const record = store.get(deps.tenantOf(request), id, clock.now());
    if (!record) throw notFoundId(id);
    return record;
  };
  const loadLive = (request: FastifyRequest<{ Params: IdParams }>) => {
    const record = load(request);
    if (record.deletedAt !== undefined) throw badRequest(`Deployment ID ${record.id} is being deleted.`);
    return record;
  };
  return { json, view, renderer, load, loadLive };
}

/** Create, list, read, patch and delete deployments. */
function registerDeploymentCrud(
  app: FastifyInstance,
  deps: DeploymentRouteDeps,
  { json, view, renderer, load, loadLive }: DeploymentRouteKit,
): void {
  const { store, clock } = deps;
  app.post<{ Body: DeploymentCreateRequest }>(
    "/v2/deployments",
    { schema: { body: CreateBody }, config: bodyChecks },
    async (request, reply) => {
      reject(checkDeploymentBody(request.body));
      canonicalBodyIds(request.body.source_config);
      const plan = planCreate(request.body, deps.env);
      const body = request.body;
      const record = store.create(deps.tenantOf(request), body.name, body.source, plan, clock.now());
      await deps.commit();
      return view(reply.code(201), record, false);
    },
  );

  app.get("/v2/deployments", FASTAPI_GET, async (request, reply) => {
    const paging = parsePaging(request.query);
    const filter = lastQueryString(request.query, "name_contains");
    const now = clock.now();
    const records = store.list(deps.tenantOf(request), now, filter, paging);
    return json(reply, renderer.renderPage(records, now, paging.offset + records.length));
  });

  app.get<{ Params: IdParams }>("/v2/deployments/:deployment_id", FASTAPI_GET, async (request, reply) =>
    view(reply, load(request)),
  );

  app.patch<{ Params: IdParams; Body: ServerPatchBody }>(
    "/v2/deployments/:deployment_id",
    { schema: { body: PatchBody }, config: idPathChecks },
    async (request, reply) => {
      // The id and the body's own rules first (422), as FastAPI validates a request before its
      // handler runs.
      reject([...uuidIssues(request.params, ["deployment_id"]), ...checkDeploymentBody(request.body)]);
      const record = loadLive(request);
      canonicalBodyIds(request.body.source_config);
      const plan = planPatch(record, request.body, deps.env, customUrlOf(deps.baseUrl(), record.id));
      store.patch(record, plan, clock.now());
      await deps.commit();
      return view(reply, record, false);
    },
  );

  const noBody = { config: { ignoresBody: true } satisfies RouteFlags };
  app.delete<{ Params: IdParams }>("/v2/deployments/:deployment_id", noBody, async (request, reply) => {
    store.delete(load(request), clock.now());
    await deps.commit();
    return reply.code(204).send();
  });
}

function registerRevisionRoutes(
  app: FastifyInstance,
  { clock, timing }: DeploymentRouteDeps,
  { load }: DeploymentRouteKit,
): void {
  app.get<{ Params: IdParams }>("/v2/deployments/:deployment_id/revisions", FASTAPI_GET, async (request) => {
    const { paging, issues } = readPaging(request.query);
    reject([...uuidIssues(request.params, ["deployment_id"]), ...issues]);
    const record = load(request);
    const now = clock.now();
    const result = page([...record.revisions].reverse(), paging);
    return {
      resources: result.resources.map((r) => formatRevision(r, now, timing.revisionMs)),
      offset: result.offset,
    };
  });

  app.get<{ Params: IdParams & { revision_id: string } }>(
    "/v2/deployments/:deployment_id/revisions/:revision_id",
    FASTAPI_GET,
    async (request) => {
      reject(uuidIssues(request.params, ["deployment_id", "revision_id"]));
      const record = load(request);
      const revisionId = requireUuid(request.params.revision_id, "revision_id");
      const revision = record.revisions.find((r) => r.id === revisionId);
      if (!revision) throw new HttpError(404, `Revision ID ${revisionId} not found.`);
      return formatRevision(revision, clock.now(), timing.revisionMs);
    },
  );
}

function registerUploadUrlRoutes(
  app: FastifyInstance,
  deps: DeploymentRouteDeps,
  { loadLive }: DeploymentRouteKit,
): void {
  const { store } = deps;
  // The spec names the path without the version segment; decisions.md uses /v2. Both answer.
  for (const path of [
    "/v2/deployments/:deployment_id/upload-url",
    "/deployments/:deployment_id/upload-url",
  ]) {
    app.post<{ Params: IdParams }>(path, { config: { ignoresBody: true } }, async (request) => {
      const record = loadLive(request);
      if (record.source === "external_container")
        throw badRequest("upload-url does not apply to source external_container (it builds no source)");
      const upload = store.issueUpload(record);
      await deps.commit();
      return { upload_url: `${deps.baseUrl()}/uploads/${upload.token}`, object_path: upload.objectPath };
    });
  }
}
