import type { ApiOptions } from "../api/config.js";
import { createControlPlaneClient } from "../api/control-plane-client.js";
import type { ResponseEvent } from "../api/http.js";
import { createPlatformClient } from "../api/platform-client.js";
import type { Clock } from "../clock.js";
import { createApplyPorts } from "../reconcile/api-adapter.js";

// The controller's API clients: control plane and platform share one rate limiter, and every
// response is counted in the controller's metrics.

export function createControllerClients(options: {
  api: ApiOptions;
  clock: Clock;
  onResponse: (event: ResponseEvent) => void;
  fetch?: typeof fetch | undefined;
}) {
  const { api, clock } = options;
  const transport = {
    onResponse: options.onResponse,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const controlPlane = createControlPlaneClient({ ...api, ...transport, clock });
  const ports = createApplyPorts({ api, clock, transport, controlPlane });
  const platform = createPlatformClient({
    ...transport,
    clock,
    limiter: controlPlane.http.limiter,
    platformUrl: api.platformUrl,
    apiKey: api.apiKey,
    tenantId: api.tenantId,
  });
  return { controlPlane, ports, platform };
}
