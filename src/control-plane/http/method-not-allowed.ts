import type { FastifyInstance } from "fastify";

// A known path asked with a method it does not serve is a 405 with `Allow`, as FastAPI (whose
// error bodies spec 2.6 shows) answers it: `{"detail": "Method Not Allowed"}`. fastify routes per
// method, so it sends such a request to the not-found handler; this keeps each route's path as a
// pattern and tells the two apart there. Only the not-found path pays for the match.

type Pattern = { regex: RegExp; methods: Set<string> };

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `/v2/deployments/:id` → /^\/v2\/deployments\/[^/]+$/ (a `*` matches the rest of the path). */
function patternOf(url: string): RegExp {
  const parts = url.split("/").map((part) => {
    if (part.startsWith(":")) return "[^/]+";
    if (part === "*") return ".*";
    return escape(part);
  });
  return new RegExp(`^${parts.join("/")}$`);
}

/** Call before any route is added: records every route's path and methods. */
export function trackRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const patterns = new Map<string, Pattern>();
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let pattern = patterns.get(route.url);
    if (pattern === undefined) {
      pattern = { regex: patternOf(route.url), methods: new Set() };
      patterns.set(route.url, pattern);
    }
    for (const method of methods) pattern.methods.add(method.toUpperCase());
  });
  /** The methods some route serves at `path` (no query), sorted; none for an unknown path. */
  return (path) => {
    const allowed = new Set<string>();
    for (const { regex, methods } of patterns.values())
      if (regex.test(path)) for (const method of methods) allowed.add(method);
    return [...allowed].sort();
  };
}

/**
 * Route options of a GET of the control plane API: FastAPI's routes (APIRoute) serve the methods
 * they name and no other, so a HEAD of a GET-only path is 405 with `Allow: GET` there; fastify adds
 * a HEAD route to every GET unless told not to. The agent server's routes keep theirs: Starlette's
 * Route, which it is built on, serves HEAD beside GET. docs/control-plane.md "Validation and errors".
 */
export const FASTAPI_GET = { exposeHeadRoute: false } as const;
