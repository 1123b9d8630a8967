import type { Clock } from "../../clock.js";
import { escapeControls } from "../../errors.js";
import { ApiError, codeForStatus } from "../errors.js";
import { parseDetail } from "./error-detail.js";
import { parseRetryAfter } from "./retry.js";
import type { ShapeCheck } from "../../schema/validators.js";
import { jsonDepthExceeds } from "../../json-depth.js";

// Reading what the server answered: a 2xx body as JSON of the expected shape, an error body as the
// server's `detail`. Apart from http.ts, which keeps the sending and the retry rules.

/** What names a request in its errors, and the shape its 2xx body must have. */
type Exchange = { method: string; path: string; schema?: ShapeCheck | undefined };

/** An answer that is not what the caller expects (wrong shape, not JSON, not an event stream). */
export const unexpectedResponse = (spec: Exchange, problems: string[]) =>
  new ApiError({
    code: "unexpected-response",
    status: 200,
    method: spec.method,
    path: spec.path,
    detail: `response does not have the expected shape (${problems.join("; ")})`,
  });

/**
 * The deepest nesting of objects and arrays read in an answer. JSON.parse reads any depth, but
 * JSON.stringify, structuredClone and every recursive walk after it (diff, status, reports) threw
 * "Maximum call stack size exceeded" at 10,000 levels, wherever the value reached first. Real answers
 * nest a few levels (the control plane refuses bodies past 64).
 */
export const MAX_RESPONSE_DEPTH = 128;

/** True when `text` nests deeper than `max` (src/json-depth.ts: one linear pass over the text). */
export const jsonTooDeep = (text: string, max = MAX_RESPONSE_DEPTH): boolean => jsonDepthExceeds(text, max);

/** What a body that is not JSON was, for its error: a login page or a proxy's answer names its type. */
const notJson = (contentType: string | null | undefined): string =>
  contentType && !/\bjson\b/i.test(contentType)
    ? `not JSON but ${escapeControls(contentType.slice(0, 100))}: something other than the API answered (a proxy or a login page?); check the URL`
    : "not JSON";

/**
 * A 2xx body: parsed JSON checked against `spec.schema`; undefined for an empty body without one.
 * `contentType` only names what came instead of JSON.
 */
export function parseSuccess(spec: Exchange, text: string, contentType?: string | null): unknown {
  if (text.trim() === "") {
    if (spec.schema) throw unexpectedResponse(spec, ["empty body"]);
    return undefined;
  }
  if (jsonTooDeep(text))
    throw unexpectedResponse(spec, [`JSON nested deeper than ${MAX_RESPONSE_DEPTH} levels, not read`]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not the parser's error as cause: its message quotes the body, which may echo a secret.
    throw unexpectedResponse(spec, [notJson(contentType)]);
  }
  const problems = spec.schema ? spec.schema(value) : [];
  if (problems.length > 0) throw unexpectedResponse(spec, problems);
  return value;
}

/**
 * The most of a 2xx body read: a broken or hostile server's endless answer would otherwise fill the
 * heap until the process dies (4 GB of spaces killed plumb with a V8 fatal error). The largest real
 * answers (a page of 100 deployments, a thread's history) are far below it.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Of an error body only its `detail` or a 200-character excerpt is kept. */
export const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/** A body as text (UTF-8, a BOM dropped), or null once it passes `limit` bytes: the rest is not read. */
export async function readBodyCapped(response: Response, limit: number): Promise<string | null> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const body = response.body;
  if (declared > limit) {
    await body?.cancel().catch(() => undefined);
    return null;
  }
  if (!body) return "";
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

const targetOf = (location: string | null | undefined): string => {
  if (!location || !URL.canParse(location)) return "";
  return ` to ${new URL(location).origin}`;
};

/** A success body over MAX_BODY_BYTES. */
export const bodyTooLarge = (spec: Exchange) =>
  unexpectedResponse(spec, [`body larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB, not read`]);

/** The status and body of an answer outside 2xx; `location` is a redirect's target. */
type ErrorAnswer = { status: number; text: string; retryAfter: string | null; location?: string | null };

/**
 * A 3xx is never followed: fetch would carry X-Api-Key (only Authorization is dropped across
 * origins) and a POST's body, secret values in it, to wherever the server points. Only the
 * target's origin is named: a path or query may hold a token.
 */
function redirectDetail(location: string | null | undefined, scrub: (text: string) => string): string {
  return scrub(`redirect${targetOf(location)} not followed: set the URL to the address it leads to`);
}

/** A non-2xx answer as an ApiError; the server's wait (429, 503) read from Retry-After. */
export function errorFromResponse(
  spec: Exchange,
  { status, text, retryAfter, location }: ErrorAnswer,
  clock: Clock,
  scrub: (text: string) => string,
): ApiError {
  const retryAfterMs =
    status === 429 || status === 503 ? parseRetryAfter(retryAfter, clock.now()) : undefined;
  return new ApiError({
    code: codeForStatus(status),
    status,
    method: spec.method,
    path: spec.path,
    detail: status >= 300 && status < 400 ? redirectDetail(location, scrub) : parseDetail(text, scrub),
    ambiguous: status >= 500,
    retryAfterMs,
  });
}

/** The first `id` or `*_id` string in `value` that holds a secret of the run, as a path; none: undefined. */
function secretIdIn(value: unknown, holds: (text: string) => boolean, path = ""): string | undefined {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = secretIdIn(item, holds, `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if ((key === "id" || key.endsWith("_id")) && typeof item === "string" && holds(item)) return at;
      const found = secretIdIn(item, holds, at);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * A 2xx answer whose ids are the server's to choose: one that holds a secret of the run (a hostile
 * control plane naming a deployment after the API key) would be printed by apply, kept in the status
 * record and committed to the status branch. It cannot be redacted (plumb sends the id back), so the
 * answer is refused.
 */
export function refuseSecretIds(spec: Exchange, value: unknown, holds: (text: string) => boolean): unknown {
  const at = secretIdIn(value, holds);
  if (at !== undefined)
    throw unexpectedResponse(spec, [
      `${at} holds a secret plumb was given (never shown, stored or sent back)`,
    ]);
  return value;
}
