import type { FastifyInstance, FastifyRequest } from "fastify";
import { unprocessable } from "../http-errors.js";
import { unsafeIntegerIssues } from "./big-integers.js";
import { jsonDepthExceeds, MAX_JSON_DEPTH, repeatedKeyOf } from "./json-scan.js";
import { nulIssue, nulPathOf } from "./nul-check.js";

// How the control plane reads a JSON body: every check on the raw text is here, before a route sees it.

const MAY_HOLD_PROTO = /__proto__|\\u/;
const refuseProto = (key: string, value: unknown): unknown => {
  if (key === "__proto__") throw new SyntaxError("a __proto__ key is not allowed");
  return value;
};

type ContentTypeParser = (
  request: FastifyRequest,
  raw: string | Buffer,
  done: (error: Error | null, body?: unknown) => void,
) => void;

/** Strict UTF-8 (RFC 8259 8.1): invalid bytes are an error, not U+FFFD stored in a name or value. */
const utf8 = new TextDecoder("utf-8", { fatal: true });
const invalidJson = (msg: string) =>
  unprocessable([{ loc: ["body"], msg: `JSON decode error: ${msg}`, type: "json_invalid" }]);

/**
 * JSON bodies: an empty body is "no body" (schemas then say what is missing); bad JSON is a 422, as
 * are bytes that are not UTF-8, an object that repeats a key (json-scan.ts), U+0000 (nul-check.ts)
 * and an integer a double cannot hold (big-integers.ts).
 */
export function installJsonParser(app: FastifyInstance) {
  app.removeAllContentTypeParsers(); // JSON here; any other type is body-policy.ts's
  // FastAPI reads a body sent without a Content-Type (or an empty one) as JSON, as it does one of
  // an application/*+json type; fastify refused both (415). Its parser is chosen by the header.
  app.addHook("onRequest", (request, _reply, done) => {
    const headers = request.raw.headers;
    const type = headers["content-type"];
    const hasBody =
      headers["transfer-encoding"] !== undefined ||
      (headers["content-length"] !== undefined && headers["content-length"] !== "0");
    if (hasBody && (type === undefined || type.trim() === "")) headers["content-type"] = "application/json";
    done();
  });
  app.addContentTypeParser(JSON_SUFFIXED, { parseAs: "buffer" }, parseJsonBody);
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, parseJsonBody);
}

/** `application/merge-patch+json` and the like (RFC 6839), which FastAPI reads as JSON. */
const JSON_SUFFIXED = /^application\/[\w!#$%&'*.^`|~-]+\+json\s*(?:;|$)/;

const parseJsonBody: ContentTypeParser = (_request, raw, done) => {
  let body: string;
  try {
    body = typeof raw === "string" ? raw : utf8.decode(raw);
  } catch {
    return done(invalidJson("the body is not valid UTF-8"), undefined);
  }
  // Only no bytes at all is no body: whitespace is text that is not JSON, as FastAPI reads it.
  if (body.length === 0) return done(null, undefined);
  if (jsonDepthExceeds(body))
    return done(
      unprocessable([
        {
          loc: ["body"],
          msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
          type: "json_too_deep",
        },
      ]),
      undefined,
    );
  let value: unknown;
  try {
    // A __proto__ key can only be spelled literally or with \u escapes: only such bodies pay
    // for the (much slower) reviver that refuses it.
    value = MAY_HOLD_PROTO.test(body) ? JSON.parse(body, refuseProto) : (JSON.parse(body) as unknown);
  } catch (error) {
    return done(invalidJson((error as Error).message), undefined);
  }
  const repeated = repeatedKeyOf(body);
  if (repeated !== undefined)
    return done(
      invalidJson(`the key ${JSON.stringify(repeated.slice(0, 100))} appears twice in one object`),
      undefined,
    );
  // JSON spells U+0000 only as an escape: bodies without one skip the walk.
  const nul = body.includes("\\u0000") ? nulPathOf(value) : undefined;
  if (nul !== undefined) return done(nulIssue(["body", ...nul]), undefined);
  const unsafe = unsafeIntegerIssues(body, value); // an integer beyond 2^53 - 1, changed by JSON.parse
  if (unsafe.length > 0) return done(unprocessable(unsafe), undefined);
  done(null, value);
};
