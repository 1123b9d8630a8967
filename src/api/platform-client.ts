import type { Organization } from "../schema/deployment.js";
import { shapeCheck } from "../schema/validators.js";
import { createHttpClient, type HttpClient, type HttpClientOptions } from "./transport/http.js";
import type { CallOptions } from "./control-plane-client.js";

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
  return {
    http,
    getOrganization: ({ signal } = {}) =>
      http.request<Organization>({ method: "GET", path: PATH, schema: ORGANIZATION, signal }),
    patchOrganization: (body, { signal } = {}) =>
      http.request<Organization>({ method: "PATCH", path: PATH, body, schema: ORGANIZATION, signal }),
  };
}
