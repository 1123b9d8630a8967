import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import type { SettingHints } from "../errors.js";
import type { RateLimiter } from "./rate-limiter.js";
import type { RetryPolicy } from "./retry.js";
import type { ShapeCheck } from "../../schema/validators.js";
import type { SecretRedactor } from "../secret-redactor.js";
import type { AllowedOrigins } from "../allowed-origins.js";

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

export type RequestSpec = {
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

/** What one client's requests share. */
export type Client = {
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
