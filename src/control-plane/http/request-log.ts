import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";

// One pino line per answered request (method, URL, status, time), written from the root logger:
// fastify's own request logging costs a child logger and two lines per request. Headers are
// never logged (so never a key), and an upload URL's token, which is a credential, is masked.
// Below info (PLUMB_LOG_LEVEL=warn) no hook is installed at all.

/** The URL as logged: `/uploads/{token}` loses its token. */
export const loggedUrl = (url: string) => url.replace(/^\/uploads\/[^/?#]+/, "/uploads/[redacted]");

export function installRequestLog(app: FastifyInstance, logger: Logger | false): void {
  if (!logger || !logger.isLevelEnabled("info")) return;
  app.addHook("onResponse", (request, reply, done) => {
    logger.info(
      {
        method: request.method,
        url: loggedUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request",
    );
    done();
  });
}
