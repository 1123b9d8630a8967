import { createsRevision } from "../schema/revision-fields.js";
import type { Deployment, DeploymentPatchRequest } from "../schema/deployment.js";
import { createDeploymentOnce } from "./create-once.js";
import { orNull } from "./errors.js";
import { createHttpClient } from "./transport/http.js";
import { createPagedList } from "./transport/paged-list.js";
import { id, shapes } from "./control-plane-client/answer-shapes.js";
import type {
  CallOptions,
  ControlPlaneClient,
  ControlPlaneClientOptions,
} from "./control-plane-client/client-types.js";
import { installationMethods } from "./control-plane-client/installation-methods.js";
import { revisionMethods } from "./control-plane-client/revision-methods.js";
import { uploadMethods } from "./control-plane-client/upload-methods.js";

export type {
  CallOptions,
  ControlPlaneClient,
  ControlPlaneClientOptions,
} from "./control-plane-client/client-types.js";

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
