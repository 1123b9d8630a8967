import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpError } from "../http-errors.js";
import type { RouteFlags } from "../request-guards.js";

// Which request bodies are read, and when the client is told to send one (docs/control-plane.md
// "Validation and errors"), as a FastAPI service behind uvicorn does it:
// - a route that takes no body (DELETE of a deployment, upload-url, an unknown path, a 405) never
//   reads one: whatever was sent (bad JSON, text) changes nothing, and the answer closes the
//   connection, as every answer given before its body was read does (connections.ts);
// - `Expect: 100-continue` is answered `100 Continue` only once the request is admitted (key, rate
//   limits, route, content type, declared size): a refusal (401, 404, 413, 415) comes instead of
//   it, so a client without a key never sends its body;
// - a control plane route reads a body of any content type: one that is not JSON is handed on as
//   text, which its model refuses (422 model_attributes_type at `["body"]`), as FastAPI hands the
//   bytes to pydantic; the agent server's routes (`/agents/...`) refuse it with 415 unread.

const EXPECTS_CONTINUE = Symbol("expects-continue");
type ContinueRequest = IncomingMessage & { [EXPECTS_CONTINUE]?: boolean };

/** `application/json` or an `application/*+json` type (RFC 6839), parameters aside, any case. */
function isJsonType(type: string | undefined): boolean {
  const media = (type ?? "").split(";", 1)[0]?.trim().toLowerCase() ?? "";
  return (
    media === "" || media === "application/json" || /^application\/[\w!#$%&'*.^`|~-]+\+json$/.test(media)
  );
}

const declaresBody = (raw: IncomingMessage) =>
  raw.headers["transfer-encoding"] !== undefined ||
  (raw.headers["content-length"] !== undefined && raw.headers["content-length"] !== "0");

/** No route reads its body: a GET or HEAD, an unknown path, a 405, or a route flagged `ignoresBody`. */
const ignoresBody = (request: FastifyRequest) =>
  request.method === "GET" ||
  request.method === "HEAD" ||
  request.is404 ||
  (request.routeOptions.config as RouteFlags | undefined)?.ignoresBody === true;

/** A stream with nothing in it that fastify takes for the whole declared body. */
function unreadBody(raw: IncomingMessage): Readable {
  const empty = Readable.from([]) as Readable & { receivedEncodedLength?: number };
  const declared = Number(raw.headers["content-length"]);
  if (Number.isFinite(declared)) empty.receivedEncodedLength = declared;
  return empty;
}

/** A catch-all body parser: a body that is not JSON, as text (its route's model refuses it). */
function parseOtherBody(_request: FastifyRequest, raw: Buffer, done: (e: Error | null, b?: unknown) => void) {
  done(null, raw.length === 0 ? undefined : raw.toString("utf8"));
}

/** Installs the policy above: before any route, after the guards' onRequest hook. */
export function installBodyPolicy(app: FastifyInstance): void {
  // With a checkContinue listener Node leaves the 100 to the server (it sends one at once otherwise).
  app.server.on("checkContinue", (raw: ContinueRequest, res) => {
    raw[EXPECTS_CONTINUE] = true;
    app.server.emit("request", raw, res);
  });
  app.addContentTypeParser("*", { parseAs: "buffer" }, parseOtherBody);
  app.addHook("preParsing", (request, reply, payload, done) => {
    const raw = request.raw as ContinueRequest;
    if (!declaresBody(raw)) return done(null, payload);
    if (ignoresBody(request)) return done(null, unreadBody(raw));
    if (request.url.startsWith("/agents/") && !isJsonType(raw.headers["content-type"]))
      return done(new HttpError(415, "Unsupported media type: send Content-Type: application/json"));
    const declared = Number(raw.headers["content-length"]);
    const fits = !(declared > (request.routeOptions.bodyLimit ?? Infinity));
    if (raw[EXPECTS_CONTINUE] === true && fits && !reply.raw.headersSent) reply.raw.writeContinue();
    done(null, payload);
  });
}
