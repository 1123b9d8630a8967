import type { FastifyError, FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { RouteTable } from "./method-not-allowed.js";
import { loggedUrl } from "./request-log.js";
import { installSlashRedirect } from "./slash-redirect.js";
import type { ValidationIssue } from "./validation-errors.js";
import { dedupe, formatAjvErrors } from "./validation-errors.js";

/** An answer of the API other than 2xx: `{"detail": ...}` with the given status. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : "validation failed");
    this.name = "HttpError";
  }
}

export const badRequest = (detail: string) => new HttpError(400, detail);
export const notFound = (detail: string) => new HttpError(404, detail);
export const unprocessable = (issues: ValidationIssue[]) => new HttpError(422, issues);

/** What a route with a body schema adds to a 422 of its schema (route `config`). */
export type RouteChecks = {
  pathChecks?: (params: unknown) => ValidationIssue[];
  bodyChecks?: (body: unknown) => ValidationIssue[];
};

/**
 * Maps every error to the spec's bodies: 400/404 `{detail: string}`, 422 HTTPValidationError; a
 * known path with a method it does not serve is 405 with `Allow`; a known path with a trailing slash
 * is 307 to it (slash-redirect.ts). Install before the routes.
 */
export function installErrorHandling(
  app: FastifyInstance,
  routes: RouteTable,
  bodyLimit: number,
  logger: Logger | false,
): void {
  installSlashRedirect(app, routes.methodsAt);
  app.setNotFoundHandler((request, reply) => {
    const allowed = routes.methodsAt(request.url.split("?", 1)[0] ?? "/");
    if (allowed.length === 0) return reply.code(404).send({ detail: "Not Found" });
    return reply.code(405).header("allow", allowed.join(", ")).send({ detail: "Method Not Allowed" });
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) {
      return reply.code(error.statusCode).headers(error.headers).send({ detail: error.detail });
    }
    if (error.validation) {
      const context = error.validationContext ?? "body";
      // Deployment routes add their path ids and cross-field rules, so that one answer lists every
      // offending field, path first, as FastAPI's does.
      const config = request.routeOptions.config as RouteChecks;
      const body = context === "body";
      const path = body ? (config.pathChecks?.(request.params) ?? []) : [];
      const extra = body ? (config.bodyChecks?.(request.body) ?? []) : [];
      const issues = body ? bodyAsFastApi(request.body, formatAjvErrors(error.validation, context)) : [];
      const detail = dedupe([
        ...path,
        ...(body ? issues : formatAjvErrors(error.validation, context)),
        ...extra,
      ]);
      return reply.code(422).send({ detail });
    }
    switch (error.code) {
      case "FST_ERR_CTP_INVALID_JSON_BODY":
      case "FST_ERR_CTP_EMPTY_JSON_BODY":
        return reply.code(422).send({
          detail: [{ loc: ["body"], msg: `JSON decode error: ${error.message}`, type: "json_invalid" }],
        });
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return reply.code(413).send({ detail: `Request body is larger than ${bodyLimit} bytes` });
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        return reply
          .code(415)
          .send({ detail: "Unsupported media type: send Content-Type: application/json" });
      default:
        break;
    }
    const status = error.statusCode ?? 500;
    if (status >= 500 && logger)
      logger.error({ err: error, method: request.method, url: loggedUrl(request.url) }, "request failed");
    return reply.code(status).send({ detail: status >= 500 ? "Internal server error" : error.message });
  });
}

/** No body, or `null`, is `missing` as FastAPI answers it (ajv calls it a type error). */
function bodyAsFastApi(body: unknown, issues: ValidationIssue[]): ValidationIssue[] {
  if (body === undefined || body === null) return [{ loc: ["body"], msg: "Field required", type: "missing" }];
  return issues;
}
