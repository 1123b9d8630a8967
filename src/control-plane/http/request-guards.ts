import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../../clock.js";
import { apiKeyOf } from "../access/auth.js";
import { createFaultPicker, echoAnswer, type FaultSpec } from "./faults.js";
import { HttpError } from "./http-errors.js";
import { slashTarget } from "./slash-redirect.js";
import { createFailureLimiter, DEFAULT_AUTH_FAILURE_LIMIT } from "../access/auth-failures.js";
import { createRateLimiter, type RateLimitOverrides } from "../access/rate-limit.js";

declare module "fastify" {
  interface FastifyRequest {
    tenantId: string;
    loseResponse: boolean;
    echoBody: boolean;
  }
}

export type GuardOptions = {
  clock: Clock;
  region: "us" | "eu";
  rateLimits: RateLimitOverrides;
  faults: FaultSpec | undefined;
  faultSeed: number;
  authenticate(request: FastifyRequest): string;
  /** True for a granted key: only those get rate-limit buckets of their own. */
  knowsKey(key: string | undefined): boolean;
  /** Failed authentications allowed per client address (default 100 per 10 s), then 429. */
  authFailureLimit?: { count: number; intervalSeconds: number } | undefined;
  /** The config of the route serving a method at a path (method-not-allowed.ts's RouteTable). */
  routeConfigAt?: (method: string, path: string) => unknown;
};

/**
 * Per-route flags in fastify's `config`: `public` routes need no key; `faults: false` marks
 * routes that are not API calls a client retries (`/info`, the agent server's `/ok` and `/info`):
 * injected faults and latency never apply to them, and they draw nothing from the fault
 * generator, so a seed gives the API calls the same faults however many checks run in between.
 * `ignoresBody` routes take no body and never read one (json/body-policy.ts).
 */
export type RouteFlags = { public?: boolean; faults?: false; ignoresBody?: true };
type ConfigAt = GuardOptions["routeConfigAt"];
/**
 * A request no route serves takes the flags of the route its trailing slash's 307 leads to:
 * `/info/` needs no key, as `/info` does not (docs/control-plane.md "Validation and errors").
 */
function flagsOf(request: FastifyRequest, configAt: ConfigAt): RouteFlags | undefined {
  if (!request.is404) return request.routeOptions.config as RouteFlags | undefined;
  const target = slashTarget(request.url.split("?", 1)[0] ?? "/");
  return target === undefined ? undefined : (configAt?.(request.method, target) as RouteFlags | undefined);
}
// Unknown routes are authenticated too (401 before 404), as behind a real API gateway. OPTIONS is
// not: spec 8.2's first row limits it by client address alone, as a CORS preflight carries no key;
// no route serves it, so it is a 405 with Allow (404 on an unknown path), and tells nothing else.
const isPublic = (request: FastifyRequest, configAt: ConfigAt) =>
  request.method === "OPTIONS" || flagsOf(request, configAt)?.public === true;
const takesFaults = (request: FastifyRequest, options: GuardOptions) =>
  flagsOf(request, options.routeConfigAt)?.faults !== false &&
  (options.faults?.methods === undefined || options.faults.methods.includes(request.method));

/** In order: injected faults, rate limits (spec 8.2), then authentication of the tenant. */
export function installRequestGuards(app: FastifyInstance, options: GuardOptions): void {
  app.decorateRequest("tenantId", "");
  app.decorateRequest("loseResponse", false);
  app.decorateRequest("echoBody", false);
  const limiter = createRateLimiter(options.region, options.rateLimits, () => options.clock.now());
  const failures = createFailureLimiter(options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT, () =>
    options.clock.now(),
  );
  const admit = (request: FastifyRequest) => {
    const user = request.headers["x-user-id"];
    const key = apiKeyOf(request);
    const known = options.knowsKey(key);
    const open = isPublic(request, options.routeConfigAt);
    // Rate limiting after authentication: a key as presented is no identity until it is known to be
    // granted (else every random key would get a bucket); failures are limited per client address.
    if (!known && !open) {
      const failed = failures(request.ip);
      if (!failed.allowed)
        throw new HttpError(429, "Too many failed authentications", {
          "retry-after": String(failed.retryAfterSeconds),
        });
    }
    const verdict = limiter({
      method: request.method,
      path: request.url.split("?", 1)[0] ?? "/",
      ip: request.ip,
      apiKey: known ? key : undefined,
      userId: typeof user === "string" ? user : undefined,
    });
    if (!verdict.allowed)
      throw new HttpError(429, "Rate limit exceeded", { "retry-after": String(verdict.retryAfterSeconds) });
    if (!open) request.tenantId = options.authenticate(request);
  };

  if (!options.faults) {
    // The common case stays synchronous: no promise and no onSend hook per request.
    app.addHook("onRequest", (request, _reply, done) => {
      try {
        admit(request);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
    return;
  }

  const pick = createFaultPicker(options.faults, options.faultSeed);
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    if (!takesFaults(request, options)) return admit(request);
    const { kind, latencyMs } = pick();
    if (latencyMs > 0) await options.clock.sleep(latencyMs);
    if (kind === "reset") {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    if (kind === "500") throw new HttpError(500, "Injected fault: internal server error");
    if (kind === "503")
      throw new HttpError(503, "Injected fault: service unavailable", { "retry-after": "1" });
    if (kind === "429") throw new HttpError(429, "Rate limit exceeded", { "retry-after": "1" });
    if (kind === "lost-response") request.loseResponse = true;
    if (kind === "echo") request.echoBody = true;
    admit(request);
  });

  // echo: a request with a body is refused with the body quoted in the answer (faults.ts).
  let echoes = 0;
  app.addHook("preValidation", async (request, reply) => {
    if (!request.echoBody || request.body === undefined || request.body === null) return;
    const answer = echoAnswer(request.body, echoes++);
    return reply.code(answer.status).type(answer.contentType).send(answer.payload);
  });

  // lost-response: the change is applied and committed, then the connection drops unanswered.
  app.addHook("onSend", async (request, _reply, payload) => {
    if (request.loseResponse) request.raw.socket.destroy();
    return payload;
  });
}
