import { ApiConfigError, type ServerModeSetting } from "../../api/config.js";
import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import type { ServerFacts } from "../../manifest/rules/server-rules.js";
import type { DeploymentManifest } from "../../schema/manifest.js";

/** What plan reads to check the installation's create rules (src/manifest/rules/server-rules.ts). */
export type ServerFactsReader = {
  client: Pick<ControlPlaneClient, "getServerMode" | "listIntegrations" | "listListeners">;
  /** PLUMB_MODE / --mode, for a server that does not report its mode. */
  setting?: ServerModeSetting | undefined;
  apiUrl: string;
};

/**
 * Reads only what the planned creates need: the mode (GET /info), and the integrations or
 * listeners when a create names one. A plan without creates reads nothing.
 */
export async function readServerFacts(
  reader: ServerFactsReader,
  creates: readonly DeploymentManifest[],
  signal?: AbortSignal,
): Promise<ServerFacts> {
  if (creates.length === 0) return {};
  const call = signal ? { signal } : {};
  const wantsIntegrations = creates.some((m) => typeof m.spec.source_config?.integration_id === "string");
  const wantsListeners = creates.some((m) => typeof m.spec.source_config?.listener_id === "string");
  const [reported, integrations, listeners] = await Promise.all([
    reader.client.getServerMode(call),
    wantsIntegrations ? reader.client.listIntegrations(call) : undefined,
    wantsListeners ? reader.client.listListeners(call) : undefined,
  ]);
  const { setting } = reader;
  if (reported !== null && setting !== undefined && reported !== setting.mode) {
    throw new ApiConfigError(
      `${setting.from} says ${setting.mode}, but the control plane at ${reader.apiUrl} reports ${reported}; remove ${setting.from} or point at the right server`,
    );
  }
  const mode =
    reported !== null
      ? { mode: reported, from: `reported by ${reader.apiUrl}/info` }
      : setting && { ...setting };
  return {
    mode,
    integrations: integrations && new Set(integrations.map((i) => i.id.toLowerCase())),
    listeners: listeners && new Set(listeners.map((l) => l.id.toLowerCase())),
  };
}
