import { systemClock } from "../../clock.js";
import { escapeControls } from "../../errors.js";
import { ApiError, withSettingHints } from "../errors.js";
import { createRateLimiter, identityOf } from "./rate-limiter.js";
import { DEFAULT_RETRY_POLICY } from "./retry.js";
import { createSecretRedactor } from "../secret-redactor.js";
import type { Client, HttpClient, HttpClientOptions, RequestSpec } from "./http-types.js";
import { requestWithRetries } from "./http-retries.js";

export type { HttpClient, HttpClientOptions, ResponseEvent } from "./http-types.js";

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
