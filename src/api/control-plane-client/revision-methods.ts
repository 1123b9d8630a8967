import type { Page } from "../../schema/deployment.js";
import type { Revision } from "../../schema/revision.js";
import { orNull } from "../errors.js";
import type { HttpClient } from "../transport/http.js";
import { id, shapes } from "./answer-shapes.js";
import type { ControlPlaneClient } from "./client-types.js";

// A deployment's revisions, their status messages redacted.

export function revisionMethods(http: HttpClient): Pick<ControlPlaneClient, "listRevisions" | "getRevision"> {
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
