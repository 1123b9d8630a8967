import { createsRevision } from "../schema/revision-fields.js";
import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  Page,
} from "../schema/deployment.js";
import type { Revision } from "../schema/revision.js";
import { shapeCheck } from "../schema/validators.js";
import { createDeploymentOnce } from "./create-once.js";
import { orNull } from "./errors.js";
import { createHttpClient, type HttpClient, type HttpClientOptions } from "./transport/http.js";
import { createPagedList } from "./transport/paged-list.js";
import type { Integration, Listener, UploadUrl } from "./shapes.js";

/** Connection settings (see config.ts) plus the transport's injectables (fetch, clock, limiter, hooks). */
export type ControlPlaneClientOptions = Omit<HttpClientOptions, "baseUrl" | "auth"> & {
  apiUrl: string;
  apiKey: string;
  tenantId?: string | undefined;
  /** Page size of list calls; the API's maximum is 100. */
  pageSize?: number;
  /** POST attempts when the outcome of the previous one is unknown; default 8 (as apply's PATCH). */
  createAttempts?: number;
};

export type CallOptions = { signal?: AbortSignal };

export type ControlPlaneClient = {
  /** Every deployment (optionally whose name contains `nameContains`, case-sensitive), paging by 100. */
  listDeployments(query?: { nameContains?: string } & CallOptions): Promise<Deployment[]>;
  /** Every deployment, one page (100) at a time: for callers that keep less than the whole list. */
  deploymentPages(options?: CallOptions): AsyncIterable<Deployment[]>;
  listDeploymentsPage(
    query: { limit?: number; offset?: number; nameContains?: string } & CallOptions,
  ): Promise<Page<Deployment>>;
  /** The deployment named exactly `name`, or null; pages through every `name_contains` match. */
  findDeploymentByName(name: string, options?: CallOptions): Promise<Deployment | null>;
  /** null when it does not exist (404). */
  getDeployment(id: string, options?: CallOptions): Promise<Deployment | null>;
  /** Creates once, even when a response is lost: after an ambiguous failure it looks the name up first. */
  createDeployment(body: DeploymentCreateRequest, options?: CallOptions): Promise<Deployment>;
  /**
   * Retried after ambiguous failures only when the body changes fields in place (absolute values, so
   * a resend is harmless). A revision-creating body gets one attempt (429 and never-sent excepted):
   * on an ambiguous ApiError the caller checks `latest_revision_id` before sending it again.
   */
  patchDeployment(id: string, body: DeploymentPatchRequest, options?: CallOptions): Promise<Deployment>;
  /**
   * One attempt (429 and never-sent excepted), whatever the body: for a caller that finds out itself
   * what an ambiguous failure did. Throws ApiError with `ambiguous` true when the server may have
   * applied it (timeout, reset, lost response, 5xx).
   */
  patchDeploymentOnce(id: string, body: DeploymentPatchRequest, options?: CallOptions): Promise<Deployment>;
  /** true when deleted, false when it was already gone (404). */
  deleteDeployment(id: string, options?: CallOptions): Promise<boolean>;
  /** One page of revisions, newest first. */
  listRevisions(
    id: string,
    query?: { limit?: number; offset?: number } & CallOptions,
  ): Promise<Page<Revision>>;
  getRevision(id: string, revisionId: string, options?: CallOptions): Promise<Revision | null>;
  createUploadUrl(id: string, options?: CallOptions): Promise<UploadUrl>;
  uploadTarball(uploadUrl: string, bytes: Uint8Array, options?: CallOptions): Promise<void>;
  listListeners(options?: CallOptions): Promise<Listener[]>;
  listIntegrations(options?: CallOptions): Promise<Integration[]>;
  /**
   * The installation's mode as a plumb control plane reports it on GET /info; null when the server
   * does not answer it (a hosted service need not serve /info) or answers something else.
   */
  getServerMode(options?: CallOptions): Promise<"saas" | "self-hosted" | null>;
  readonly http: HttpClient;
};

// The answers' checks, compiled at build time (schema/validators.ts).
const shapes = {
  deployment: shapeCheck("Deployment"),
  deploymentPage: shapeCheck("DeploymentPage"),
  revision: shapeCheck("Revision"),
  revisionPage: shapeCheck("RevisionPage"),
  listenerPage: shapeCheck("ListenerPage"),
  integrationList: shapeCheck("IntegrationList"),
  uploadUrl: shapeCheck("UploadUrl"),
};

const id = (value: string) => encodeURIComponent(value);

export function createControlPlaneClient(options: ControlPlaneClientOptions): ControlPlaneClient {
  const { apiUrl, apiKey, tenantId, pageSize = 100, createAttempts = 8, ...transport } = options;
  const http = createHttpClient({
    ...transport,
    baseUrl: apiUrl,
    auth: { scheme: "api-key", apiKey, tenantId },
  });
  const { pagesOf, listAll } = createPagedList(http, apiUrl, pageSize);

  const listDeployments: ControlPlaneClient["listDeployments"] = (query = {}) =>
    listAll<Deployment>(
      "/v2/deployments",
      shapes.deploymentPage,
      { name_contains: query.nameContains },
      query.signal,
    );

  async function findDeploymentByName(name: string, options: CallOptions = {}): Promise<Deployment | null> {
    const matches = await listDeployments({ nameContains: name, signal: options.signal });
    return matches.find((deployment) => deployment.name === name) ?? null;
  }

  const createOnce = createDeploymentOnce(http, transport, {
    attempts: createAttempts,
    findByName: (name, signal) => findDeploymentByName(name, { signal }),
  });

  const patch = (
    deploymentId: string,
    body: DeploymentPatchRequest,
    idempotent: boolean,
    signal?: AbortSignal,
  ) =>
    http.request<Deployment>({
      method: "PATCH",
      path: `/v2/deployments/${id(deploymentId)}`,
      route: "/v2/deployments/{id}",
      body,
      schema: shapes.deployment,
      idempotent,
      signal,
    });

  return {
    http,
    ...revisionMethods(http),
    ...uploadMethods(http),
    ...installationMethods(http, listAll),
    listDeployments,
    deploymentPages: (options = {}) =>
      pagesOf<Deployment>("/v2/deployments", shapes.deploymentPage, {}, options.signal),
    listDeploymentsPage: ({ limit = pageSize, offset = 0, nameContains, signal }) =>
      http.request({
        method: "GET",
        path: "/v2/deployments",
        query: { limit, offset, name_contains: nameContains },
        schema: shapes.deploymentPage,
        signal,
      }),
    findDeploymentByName,
    getDeployment: (deploymentId, { signal } = {}) =>
      orNull(
        http.request<Deployment>({
          method: "GET",
          path: `/v2/deployments/${id(deploymentId)}`,
          route: "/v2/deployments/{id}",
          schema: shapes.deployment,
          signal,
        }),
      ),
    createDeployment: (body, { signal } = {}) => createOnce(body, signal),
    // Resending a revision-creating body after a lost response would create a second revision.
    patchDeployment: (deploymentId, body, { signal } = {}) =>
      patch(deploymentId, body, !createsRevision(body), signal),
    patchDeploymentOnce: (deploymentId, body, { signal } = {}) => patch(deploymentId, body, false, signal),
    deleteDeployment: async (deploymentId, { signal } = {}) => {
      const path = `/v2/deployments/${id(deploymentId)}`;
      const done = await orNull(
        http.request({ method: "DELETE", path, route: "/v2/deployments/{id}", signal }),
      );
      return done !== null;
    },
  };
}

function revisionMethods(http: HttpClient): Pick<ControlPlaneClient, "listRevisions" | "getRevision"> {
  // A revision's status_message is the server's text: it may quote what was sent.
  const redactRevision = (revision: Revision): Revision =>
    revision.status_message === null
      ? revision
      : { ...revision, status_message: http.redact(revision.status_message) };
  return {
    listRevisions: async (deploymentId, { limit = 20, offset = 0, signal } = {}) => {
      const page = await http.request<Page<Revision>>({
        method: "GET",
        path: `/v2/deployments/${id(deploymentId)}/revisions`,
        route: "/v2/deployments/{id}/revisions",
        query: { limit, offset },
        schema: shapes.revisionPage,
        signal,
      });
      return { ...page, resources: page.resources.map(redactRevision) };
    },
    getRevision: async (deploymentId, revisionId, { signal } = {}) => {
      const revision = await orNull(
        http.request<Revision>({
          method: "GET",
          path: `/v2/deployments/${id(deploymentId)}/revisions/${id(revisionId)}`,
          route: "/v2/deployments/{id}/revisions/{revision_id}",
          schema: shapes.revision,
          signal,
        }),
      );
      return revision && redactRevision(revision);
    },
  };
}

function uploadMethods(http: HttpClient): Pick<ControlPlaneClient, "createUploadUrl" | "uploadTarball"> {
  return {
    // A second upload URL is harmless (only the one used in a PATCH matters), so it may be retried.
    createUploadUrl: (deploymentId, { signal } = {}) =>
      http.request<UploadUrl>({
        method: "POST",
        path: `/v2/deployments/${id(deploymentId)}/upload-url`,
        route: "/v2/deployments/{id}/upload-url",
        body: {},
        schema: shapes.uploadUrl,
        idempotent: true,
        signal,
      }),
    uploadTarball: async (uploadUrl, bytes, { signal } = {}) => {
      const url = new URL(uploadUrl, `${http.baseUrl}/`);
      // Errors and metrics name it by its first path segment only: a signed URL carries its
      // credential in the query or (as the local control plane's /uploads/{token}) in the path.
      await http.request({
        method: "PUT",
        url: url.href,
        path: `/${url.pathname.split("/")[1] ?? ""}/[redacted]`,
        route: "upload",
        rawBody: bytes,
        contentType: "application/gzip",
        signal,
      });
    },
  };
}

/** What the installation offers: listeners, integrations and its mode. */
function installationMethods(
  http: HttpClient,
  listAll: ReturnType<typeof createPagedList>["listAll"],
): Pick<ControlPlaneClient, "listListeners" | "getServerMode" | "listIntegrations"> {
  return {
    listListeners: ({ signal } = {}) => listAll<Listener>("/v2/listeners", shapes.listenerPage, {}, signal),
    getServerMode: async ({ signal } = {}) => {
      try {
        const info = await http.request<unknown>({ method: "GET", path: "/info", signal });
        const mode = (info as { mode?: unknown } | null)?.mode;
        return mode === "saas" || mode === "self-hosted" ? mode : null;
      } catch (error) {
        if (signal?.aborted) throw error;
        return null; // no /info, or not JSON: the mode comes from the settings, if any
      }
    },
    listIntegrations: ({ signal } = {}) =>
      http.request({
        method: "GET",
        path: "/v1/integrations/gitrepo/install",
        schema: shapes.integrationList,
        signal,
      }),
  };
}
