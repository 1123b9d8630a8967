import type { ApiOptions } from "../api/config.js";
import { createControlPlaneClient } from "../api/control-plane-client.js";
import type { ResponseEvent } from "../api/transport/http.js";
import { createPlatformClient } from "../api/platform-client.js";
import { createRateLimiter, DEFAULT_API_KEY_CATEGORY } from "../api/transport/rate-limiter.js";
import { createSecretRedactor } from "../api/secret-redactor.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { createApplyPorts } from "../apply/api/api-adapter.js";

// The controller's API clients: control plane and platform share one rate limiter (its budget the
// key's, configurable for control planes that grant more), and every response is counted in the
// controller's metrics. One secret redactor for all of them (src/api/secret-redactor.ts).

export function createControllerClients(options: {
  api: ApiOptions;
  clock: Clock;
  onResponse: (event: ResponseEvent) => void;
  fetch?: typeof fetch | undefined;
  rateLimit?: { limit: number; windowMs: number } | undefined;
  /** The state lock's fence, checked immediately before every mutating request leaves. */
  beforeWrite?: () => void;
  /** Where the transport says what it decided (a rotated key taken up, a retry given up); never a secret. */
  logger?: Logger | undefined;
}) {
  const { api, clock, rateLimit } = options;
  // The controller's secrets for its whole life: each reconcile adds the values it resolves.
  const redactor = createSecretRedactor();
  const transport = {
    redactor,
    onResponse: options.onResponse,
    // An Environment's client: its errors name that Environment's settings, not PLUMB_API_KEY.
    ...(api.settingHints ? { settingHints: api.settingHints } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.beforeWrite ? { beforeWrite: options.beforeWrite } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };
  const category = rateLimit ? { ...DEFAULT_API_KEY_CATEGORY, ...rateLimit } : DEFAULT_API_KEY_CATEGORY;
  const limiter = createRateLimiter({ clock, categorize: () => category });
  const controlPlane = createControlPlaneClient({ ...api, ...transport, clock, limiter });
  // One platform client, on the control plane's limiter (the server counts the key's requests together).
  const platform = createPlatformClient({
    ...transport,
    clock,
    limiter: controlPlane.http.limiter,
    platformUrl: api.platformUrl,
    allowedOrigins: api.allowedOrigins,
    apiKey: api.apiKey,
    apiKeyFile: api.apiKeyFile,
    tenantId: api.tenantId,
  });
  const ports = createApplyPorts({ api, clock, transport, controlPlane, platform });
  return { controlPlane, ports, platform };
}
