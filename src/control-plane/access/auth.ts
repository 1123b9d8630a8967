import type { FastifyRequest } from "fastify";
import { HttpError } from "../http/http-errors.js";
import { canonicalUuid } from "../http/uuid.js";
import type { ApiKeyGrant } from "../options.js";

/** The caller's key from `X-Api-Key` or `Authorization: Bearer` (never logged). */
export function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers["x-api-key"];
  if (typeof header === "string" && header) return header;
  const authorization = request.headers.authorization;
  const match = typeof authorization === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

/** Resolves the caller's tenant, or throws 401/403 as decisions.md says; `knows` says if a key is granted. */
export function createAuthenticator(grants: ApiKeyGrant[]) {
  let byKey = new Map(grants.map((g) => [g.key, g.tenants]));
  const knows = (key: string | undefined) => key !== undefined && byKey.has(key);
  const authenticate = (request: FastifyRequest): string => {
    const key = apiKeyOf(request);
    const tenants = key === undefined ? undefined : byKey.get(key);
    // RFC 9110 15.5.2: a 401 names a scheme to authenticate with (spec 5.1's Bearer), as FastAPI's
    // HTTPBearer answers; X-Api-Key, which has no registered scheme, is taken too.
    if (!tenants) throw new HttpError(401, "Invalid token", { "www-authenticate": "Bearer" });
    const header = request.headers["x-tenant-id"];
    // A tenant id is a uuid: read in any of its spellings, as the path ids are (docs/control-plane.md "Ids").
    const asked =
      typeof header === "string" && header ? (canonicalUuid(header) ?? header.toLowerCase()) : undefined;
    if (asked === undefined) {
      if (tenants.length === 1) return tenants[0] as string;
      // The public API's body, word for word (decisions.md "Authentication").
      throw new HttpError(403, "requires workspace specification");
    }
    if (!tenants.includes(asked)) throw new HttpError(403, `This API key cannot reach tenant ${asked}`);
    return asked;
  };
  /** The keys granted from now on (a key rotated or revoked at run time): the next request sees them. */
  const replace = (next: ApiKeyGrant[]) => {
    byKey = new Map(next.map((g) => [g.key, g.tenants]));
  };
  return { authenticate, knows, replace };
}
