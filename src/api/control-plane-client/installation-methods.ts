import type { HttpClient } from "../transport/http.js";
import type { createPagedList } from "../transport/paged-list.js";
import type { Listener } from "../shapes.js";
import { shapes } from "./answer-shapes.js";
import type { ControlPlaneClient } from "./client-types.js";

// The client's calls about the installation rather than its deployments.

/** What the installation offers: listeners, integrations and its mode. */
export function installationMethods(
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
