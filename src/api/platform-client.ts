import type { Organization } from "../schema/deployment.js";
import { shapeCheck } from "../schema/validators.js";
import { createHttpClient, type HttpClient, type HttpClientOptions } from "./transport/http.js";
import type { CallOptions } from "./control-plane-client.js";
import { ApiConfigError } from "./config.js";
import { ApiError } from "./errors.js";

export type PlatformClientOptions = Omit<HttpClientOptions, "baseUrl" | "auth"> & {
  /** `{platform_url}`; config.ts defaults it to the control plane URL. */
  platformUrl: string;
  apiKey: string;
  tenantId?: string | undefined;
};

type OrganizationAccessPatch = { jit_provisioning_enabled?: boolean; invites_enabled?: boolean };

export type PlatformClient = {
  getOrganization(options?: CallOptions): Promise<Organization>;
  /** The two settings are independent: send only the ones to change. */
  patchOrganization(body: OrganizationAccessPatch, options?: CallOptions): Promise<Organization>;
  readonly http: HttpClient;
};

const PATH = "/api/v1/organizations/current/info";
const ORGANIZATION = shapeCheck("Organization");

/** Organization access settings (spec 4.3); the platform API authenticates with `Authorization: Bearer`. */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const { platformUrl, apiKey, tenantId, ...transport } = options;
  const http = createHttpClient({
    ...transport,
    baseUrl: platformUrl,
    auth: { scheme: "bearer", apiKey, tenantId },
  });
  // The current organization always exists: a 404 says no platform API is at platformUrl.
  const explained = (error: unknown): never => {
    throw error instanceof ApiError && error.status === 404 ? wrongPlatformUrl(platformUrl, error) : error;
  };
  return {
    http,
    getOrganization: ({ signal } = {}) =>
      http
        .request<Organization>({ method: "GET", path: PATH, schema: ORGANIZATION, signal })
        .catch(explained),
    patchOrganization: (body, { signal } = {}) =>
      http
        .request<Organization>({ method: "PATCH", path: PATH, body, schema: ORGANIZATION, signal })
        .catch(explained),
  };
}

/** Paths a user may have copied into the platform URL: the API's own prefixes. */
const API_PREFIX = /\/api(?:\/v\d+)?$/;

/**
 * A 404 for the current organization, said as the setting that is wrong and how to fix it. It was
 * "GET /api/v1/organizations/current/info failed: 404 — Not Found", naming neither the URL nor
 * the setting (a platform URL written with its /api/v1 asks for /api/v1/api/v1/...).
 */
function wrongPlatformUrl(platformUrl: string, cause: ApiError): ApiConfigError {
  const trimmed = platformUrl.replace(/\/+$/, "");
  const base = API_PREFIX.test(trimmed) ? trimmed.replace(API_PREFIX, "") : null;
  const advice = base
    ? `use the base URL without ${trimmed.slice(base.length)}: ${base}`
    : "use the platform API's base URL, without a path";
  const error = new ApiConfigError(
    `the platform URL ${trimmed} looks wrong: GET ${trimmed}${PATH} answered 404, so no platform API is there; ${advice} (PLUMB_PLATFORM_URL, --platform-url or an Environment's platform_url; by default the API URL)`,
  );
  return Object.assign(error, { cause });
}
