import type { HttpClient } from "../transport/http.js";
import type { UploadUrl } from "../shapes.js";
import { id, shapes } from "./answer-shapes.js";
import type { ControlPlaneClient } from "./client-types.js";

// A deployment's source upload: the upload URL, then the tarball sent to it.

export function uploadMethods(
  http: HttpClient,
): Pick<ControlPlaneClient, "createUploadUrl" | "uploadTarball"> {
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
