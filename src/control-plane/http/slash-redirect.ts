import type { FastifyInstance } from "fastify";

// FastAPI's default (Starlette's Router, redirect_slashes=True): a path that no route serves but
// that ends with "/" is answered 307, its Location the same URL with the trailing slashes taken off,
// when some route serves that path (with any method: the method is judged after the redirect, 405
// if need be). fastify matched `/v2/deployments/` to `/v2/deployments/:deployment_id` with an empty
// id (422 uuid_parsing) and answered 404 for `/v2/deployments/{id}/`. No route of this server ends
// with "/", so Starlette's other direction (adding a slash) never applies. docs/control-plane.md
// "Validation and errors".

/**
 * Answers 307 for a path with trailing slashes that `methodsAt` knows without them. Install after
 * the authentication hook (an unknown key is 401 first, unless the route it leads to needs none:
 * `/info/`, request-guards.ts) and before the not-found handler, whose hooks are those installed
 * before it.
 */
export function installSlashRedirect(app: FastifyInstance, methodsAt: (path: string) => string[]): void {
  app.addHook("onRequest", (request, reply, done) => {
    const [path = "/", query] = splitQuery(request.url);
    const target = slashTarget(path);
    if (target === undefined || methodsAt(path).length > 0 || methodsAt(target).length === 0) return done();
    // Starlette builds the Location from the Host header, else from the address the request came
    // to (absolute, as RedirectResponse sends it).
    const host = request.headers.host ?? serverAddress(request.socket.localAddress, request.socket.localPort);
    const location = `${request.protocol}://${host}${target}${query === undefined ? "" : `?${query}`}`;
    void reply.code(307).header("location", location).send();
  });
}

/** `path` without its trailing slashes, when it has some and something is left; else undefined. */
export function slashTarget(path: string): string | undefined {
  if (path.length <= 1 || !path.endsWith("/")) return undefined;
  const target = path.replace(/\/+$/, "");
  return target === "" ? undefined : target;
}

function splitQuery(url: string): [string, string | undefined] {
  const at = url.indexOf("?");
  return at < 0 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}

/** `HOST:PORT` of the socket's local end (an HTTP/1.0 request may send no Host header). */
function serverAddress(address: string | undefined, port: number | undefined): string {
  const host = address?.includes(":") ? `[${address}]` : (address ?? "localhost");
  return port === undefined || port === 80 ? host : `${host}:${port}`;
}
