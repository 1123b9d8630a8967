import { ApiError } from "../errors.js";
import { networkCode, wasNeverSent } from "./retry.js";
import {
  bodyTooLarge,
  errorFromResponse,
  MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  parseSuccess,
  readBodyCapped,
  refuseSecretIds,
  unexpectedResponse,
} from "./response-body.js";
import { abortableExchange } from "./abortable-exchange.js";
import { checkApiOrigin } from "../allowed-origins.js";
import type { Client, RequestSpec } from "./http-types.js";
import { UUID_PATTERN } from "../../schema/constants.js";

/**
 * A UUID id is never refused (refuseSecretIds): a deployment's secrets also carry settings such as
 * another deployment's or the tenant's id, which the answers hold too.
 */
const UUID = new RegExp(UUID_PATTERN);

/** fetch refuses some ports outright (the "bad ports" of the Fetch standard, e.g. 1, 22, 25, 6000). */
export const BLOCKED_PORT = "port blocked by fetch (the Fetch standard's bad ports); use another port";
const blockedPort = (error: unknown): string | undefined =>
  error instanceof Error && error.cause instanceof Error && error.cause.message === "bad port"
    ? BLOCKED_PORT
    : undefined;

function headersFor(c: Client, spec: RequestSpec, url: URL): Record<string, string> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "plumb" };
  if (spec.body !== undefined) headers["content-type"] = "application/json";
  if (spec.rawBody !== undefined) headers["content-type"] = spec.contentType ?? "application/octet-stream";
  if (url.origin !== c.origin) return headers; // never hand our key to a third party (signed upload URLs)
  if (c.auth.scheme === "bearer") headers.authorization = `Bearer ${c.auth.apiKey}`;
  else headers["x-api-key"] = c.auth.apiKey;
  if (c.auth.tenantId) headers["x-tenant-id"] = c.auth.tenantId;
  return headers;
}

function urlFor(c: Client, spec: RequestSpec): URL {
  const url = new URL(spec.url ?? `${c.baseUrl}${spec.path}`);
  for (const [key, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url;
}

export async function attempt(c: Client, spec: RequestSpec, attemptNo: number): Promise<unknown> {
  const url = urlFor(c, spec);
  // Only a request to the client's own origin carries the key (headersFor): that origin must be listed.
  if (url.origin === c.origin)
    checkApiOrigin(url.href, c.options.allowedOrigins, `${spec.method} ${spec.path} not sent`);
  const headers = headersFor(c, spec, url);
  const permit = { identity: c.identity, method: spec.method, path: spec.path, signal: spec.signal };
  return c.limiter.schedule(permit, async (waitedMs) => {
    if (spec.method !== "GET") c.options.beforeWrite?.();
    const exchange = abortableExchange(spec.timeoutMs ?? c.options.timeoutMs ?? 30_000, spec.signal);
    const signal = exchange.signal;
    const started = c.clock.now();
    const transportError = (error: unknown): unknown => {
      if (spec.signal?.aborted) return spec.signal.reason; // the caller cancelled: not ours to retry
      const timedOut = exchange.timedOut();
      return new ApiError({
        code: timedOut ? "timeout" : "network",
        status: 0,
        method: spec.method,
        path: spec.path,
        detail: timedOut ? null : (networkCode(error) ?? blockedPort(error) ?? "connection failed"),
        url: url.origin,
        ambiguous: timedOut || !wasNeverSent(error),
        cause: error,
      });
    };
    let status = 0;
    let text = "";
    let retryAfter: string | null;
    let location: string | null;
    let tooLarge = false;
    let contentType: string | null;
    let stream: ReadableStream<Uint8Array> | null = null;
    try {
      const body = spec.rawBody ?? (spec.body === undefined ? undefined : JSON.stringify(spec.body));
      // A redirect from the API's origin is answered, never followed (errorFromResponse says where
      // it pointed): it would carry the key. Another origin's request (a signed upload URL) carries
      // none, so storage may redirect it (a bucket's region) as before.
      const redirect = url.origin === c.origin ? "manual" : "follow";
      const init = { method: spec.method, headers, body, signal, redirect } as const;
      const response = await c.fetchImpl(url, init);
      status = response.status;
      c.answered = true;
      retryAfter = response.headers.get("retry-after");
      location = response.headers.get("location");
      const ok = status >= 200 && status < 300;
      contentType = response.headers.get("content-type");
      const eventStream = contentType?.startsWith("text/event-stream") === true;
      if (spec.stream && ok && eventStream && response.body) stream = response.body;
      else {
        const read = await readBodyCapped(response, ok ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES);
        tooLarge = read === null;
        text = read ?? "";
      }
    } catch (error) {
      throw transportError(error);
    } finally {
      // A stream's body is read after this returns: its timeout keeps bounding the whole stream.
      if (!stream) exchange.release();
      const event = {
        method: spec.method,
        path: spec.path,
        route: spec.route ?? spec.path,
        status,
        durationMs: c.clock.now() - started,
        attempt: attemptNo,
        waitedMs,
      };
      c.options.onResponse?.(event);
      c.logger?.debug(event, "api response");
    }
    if (status < 200 || status >= 300)
      throw errorFromResponse(spec, { status, text, retryAfter, location }, c.clock, c.scrub);
    if (tooLarge) throw bodyTooLarge(spec);
    if (spec.stream) return stream ?? Promise.reject(unexpectedResponse(spec, ["not text/event-stream"]));
    // Its Content-Type names a body that is not JSON: server text, a header like any other.
    const value = parseSuccess(spec, text, contentType === null ? null : c.redactor.redact(contentType));
    return refuseSecretIds(spec, value, (id) => !UUID.test(id) && c.redactor.redactWhole(id) !== id);
  });
}
