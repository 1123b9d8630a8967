import { backoffDelay, type Clock, systemClock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { escapeControls } from "../../errors.js";
import { ApiError, type SettingHints, withSettingHints } from "../errors.js";
import { createRateLimiter, identityOf, type RateLimiter } from "./rate-limiter.js";
import {
  retryBackoff,
  DEFAULT_RETRY_POLICY,
  IDEMPOTENT_METHODS,
  networkCode,
  RETRYABLE_STATUSES,
  type RetryPolicy,
  wasNeverSent,
} from "./retry.js";
import {
  bodyTooLarge,
  errorFromResponse,
  MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  parseSuccess,
  readBodyCapped,
  unexpectedResponse,
} from "./response-body.js";
import { abortableExchange } from "./abortable-exchange.js";
import type { ShapeCheck } from "../../schema/validators.js";
import { createSecretRedactor, type SecretRedactor } from "../secret-redactor.js";
import { readKeyFileAgain } from "../config.js";
import { type AllowedOrigins, checkApiOrigin } from "../allowed-origins.js";

type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** `api-key`: X-Api-Key (control plane, agent server); `bearer`: Authorization: Bearer (platform). */
type Auth = { scheme: "api-key" | "bearer"; apiKey: string; tenantId?: string | undefined };

/** One HTTP exchange, for metrics. `route` is the low-cardinality template, e.g. /v2/deployments/{id}. */
export type ResponseEvent = {
  method: string;
  path: string;
  route: string;
  status: number;
  durationMs: number;
  attempt: number;
  waitedMs: number;
};

export type HttpClientOptions = {
  baseUrl: string;
  auth: Auth;
  fetch?: typeof fetch;
  clock?: Clock;
  /** Uniform in [0, 1); injected so backoff is testable. */
  random?: () => number;
  /** Shared between clients using the same key, so they draw from one budget. */
  limiter?: RateLimiter;
  /** Per attempt, from sending to the end of the body; default 30 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  onResponse?: (event: ResponseEvent) => void;
  logger?: Logger;
  /** The run's secrets, removed from every error text the server sends (the API key is added to it). */
  redactor?: SecretRedactor;
  /**
   * The file the key came from (ApiOptions.apiKeyFile): on a 401 it is read again, and a key that
   * changed there is used from then on, the request sent once more with it (a rotated key).
   */
  apiKeyFile?: string | undefined;
  /**
   * Called immediately before a request that may change something (any method but GET) leaves,
   * after every rate-limiter and retry wait; throwing aborts it unsent. The state lock's fence
   * (StateLock.assertHeld): a holder whose lease lapsed while it waited sends nothing.
   */
  beforeWrite?: () => void;
  /**
   * The origins the key may go to (ApiOptions.allowedOrigins): a request that would carry it to
   * another (an agent server's URL from the manifests) is refused unsent (api-origin-not-allowed).
   */
  allowedOrigins?: AllowedOrigins | undefined;
  /** Where the settings were read from (ApiOptions.settingHints): its errors' hints name them. */
  settingHints?: SettingHints | undefined;
};

type RequestSpec = {
  method: HttpMethod;
  /** Path under baseUrl, without query. */
  path: string;
  route?: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body. */
  body?: unknown;
  /** Raw body (uploads); sent as-is with `contentType`. */
  rawBody?: Uint8Array;
  contentType?: string;
  /** Absolute URL overriding baseUrl + path (uploads); credentials are sent only to baseUrl's origin. */
  url?: string;
  /** Shape the 2xx body must have; else an `unexpected-response` error. */
  schema?: ShapeCheck;
  /** Overrides the method's default (see IDEMPOTENT_METHODS). */
  idempotent?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Resolve to the body of a 2xx `text/event-stream` answer, unread (see HttpClient.openStream). */
  stream?: boolean;
};

export type HttpClient = {
  /** Sends with retries; resolves to the parsed JSON body (undefined for an empty body). */
  request<T = unknown>(spec: RequestSpec): Promise<T>;
  /**
   * Same sending rules as request (a POST is retried only on 429 or when never sent), but resolves
   * to the open body of a 2xx `text/event-stream` answer. `timeoutMs` bounds the whole stream.
   */
  openStream(spec: Omit<RequestSpec, "stream" | "schema">): Promise<ReadableStream<Uint8Array>>;
  readonly baseUrl: string;
  readonly limiter: RateLimiter;
  /** Removes the run's secrets (and the key) from text this server sent, before it is kept anywhere. */
  redact(text: string): string;
};

/** fetch refuses some ports outright (the "bad ports" of the Fetch standard, e.g. 1, 22, 25, 6000). */
const BLOCKED_PORT = "port blocked by fetch (the Fetch standard's bad ports); use another port";
const blockedPort = (error: unknown): string | undefined =>
  error instanceof Error && error.cause instanceof Error && error.cause.message === "bad port"
    ? BLOCKED_PORT
    : undefined;

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const clock = options.clock ?? systemClock;
  const redactor = options.redactor ?? createSecretRedactor();
  redactor.add([options.auth.apiKey]);
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const c: Client = {
    options,
    clock,
    random: options.random ?? Math.random,
    fetchImpl: options.fetch ?? globalThis.fetch,
    limiter: options.limiter ?? createRateLimiter({ clock }),
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    baseUrl,
    origin: new URL(baseUrl).origin,
    auth: options.auth,
    logger: options.logger,
    identity: identityOf(options.auth.apiKey),
    // A server's text with its control characters escaped: a hostile "\n::error::" or "\u001b[2J"
    // reached the terminal and CI logs as it was.
    scrub: (text: string) => escapeControls(redactor.redact(text)),
    redactor,
    answered: false,
  };
  const hints = options.settingHints;
  const request = <T>(spec: RequestSpec) =>
    hints === undefined
      ? requestWithRetries<T>(c, spec)
      : requestWithRetries<T>(c, spec).catch((error: unknown) => {
          throw error instanceof ApiError ? withSettingHints(error, hints) : error;
        });
  const openStream: HttpClient["openStream"] = (spec) =>
    request<ReadableStream<Uint8Array>>({ ...spec, stream: true });
  return { request, openStream, baseUrl, limiter: c.limiter, redact: c.scrub };
}

/** What one client's requests share. */
type Client = {
  options: HttpClientOptions;
  clock: Clock;
  random: () => number;
  fetchImpl: typeof globalThis.fetch;
  limiter: RateLimiter;
  policy: RetryPolicy;
  baseUrl: string;
  origin: string;
  auth: HttpClientOptions["auth"];
  logger: HttpClientOptions["logger"];
  identity: string;
  scrub: (text: string) => string;
  redactor: SecretRedactor;
  /**
   * Whether this server has answered anything yet. A refused connection before that is a wrong URL
   * or a server that is not running: said at once. After it, a restart: retried as usual.
   */
  answered: boolean;
};

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

async function attempt(c: Client, spec: RequestSpec, attemptNo: number): Promise<unknown> {
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
      const eventStream = response.headers.get("content-type")?.startsWith("text/event-stream") === true;
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
    return parseSuccess(spec, text);
  });
}

function shouldRetry(c: Client, error: ApiError, idempotent: boolean): boolean {
  if (error.status === 429) return true; // refused before any work: safe for every method
  if (error.detail === "ECONNREFUSED" && !c.answered) return false;
  if (error.detail === BLOCKED_PORT) return false; // fetch refuses the port itself: never better later
  if (error.code === "network" || error.code === "timeout") return idempotent || !error.ambiguous;
  return idempotent && RETRYABLE_STATUSES.has(error.status);
}

/** After a 401: the key file holds another key now (rotated in place); it replaces the old one. */
function takeRotatedKey(c: Client): boolean {
  const file = c.options.apiKeyFile;
  const key = file === undefined ? undefined : readKeyFileAgain(file);
  if (key === undefined || key === c.auth.apiKey) return false;
  c.redactor.add([key]);
  c.auth = { ...c.auth, apiKey: key };
  c.logger?.info({ file }, "the API key file holds another key since it was read: using it");
  return true;
}

async function requestWithRetries<T>(c: Client, spec: RequestSpec): Promise<T> {
  const idempotent = spec.idempotent ?? IDEMPOTENT_METHODS.has(spec.method);
  const started = c.clock.now();
  let rotated = false;
  for (let attemptNo = 1; ; attemptNo += 1) {
    let failure: ApiError;
    try {
      return (await attempt(c, spec, attemptNo)) as T;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      failure = error;
    }
    // A 401 is answered before any work (docs/api-client.md), so any method may go once more.
    if (failure.status === 401 && !rotated && takeRotatedKey(c)) {
      rotated = true;
      continue;
    }
    if (!shouldRetry(c, failure, idempotent) || attemptNo >= c.policy.maxAttempts) throw failure;
    const delay = failure.retryAfterMs ?? backoffDelay(attemptNo, retryBackoff(c.policy), c.random);
    if (c.clock.now() + delay - started > c.policy.maxElapsedMs) throw failure;
    if (failure.status === 429)
      c.limiter.pause({ identity: c.identity, method: spec.method, path: spec.path }, c.clock.now() + delay);
    c.logger?.warn(
      {
        method: spec.method,
        path: spec.path,
        status: failure.status,
        code: failure.code,
        attempt: attemptNo,
        delayMs: delay,
      },
      "api call failed, retrying",
    );
    await c.clock.sleep(delay, spec.signal);
  }
}
