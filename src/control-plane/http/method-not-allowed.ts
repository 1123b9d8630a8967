import type { FastifyInstance } from "fastify";

// A known path asked with a method it does not serve is a 405 with `Allow`, as FastAPI (whose
// error bodies spec 2.6 shows) answers it: `{"detail": "Method Not Allowed"}`. fastify routes per
// method, so it sends such a request to the not-found handler; this keeps each route's path as a
// pattern and tells the two apart there. Only the not-found path pays for the match.

// A path several route patterns match (`/threads/search` and `/threads/:thread_id`) is served, for
// each method, by the most specific pattern that has it: a literal segment before a parameter, a
// parameter before `*`, the first segment that differs deciding, as fastify routes it. So `Allow`
// lists every method of every pattern the path matches: exactly the methods not answered 405 there
// (RFC 9110 15.5.6, the target resource's supported methods). Listing the most specific pattern's
// alone told a client "Allow: POST" at `/threads/{tid}/runs/crons`, where GET and DELETE are served
// (by `/runs/{run_id}`). docs/control-plane.md "Validation and errors".

type Pattern = { regex: RegExp; rank: number[]; methods: Map<string, unknown> };

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const kindOf = (part: string) => (part === "*" ? 2 : part.startsWith(":") ? 1 : 0);

/** `/v2/deployments/:id` → /^\/v2\/deployments\/[^/]+$/ (a `*` matches the rest of the path). */
function patternOf(url: string): RegExp {
  const parts = url.split("/").map((part) => {
    if (part.startsWith(":")) return "[^/]+";
    if (part === "*") return ".*";
    return escape(part);
  });
  return new RegExp(`^${parts.join("/")}$`);
}

/** Negative when `a` is the more specific pattern (a literal where `b` has a parameter). */
function compareRank(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return a.length - b.length;
}

/** What the routes serve, for answers no route gives: a 405's `Allow`, a trailing slash's 307. */
export type RouteTable = {
  /** The methods of every pattern that matches `path` (no query), sorted; none for an unknown path. */
  methodsAt: (path: string) => string[];
  /** The `config` of the route that serves `method` at `path`; undefined when none does. */
  configAt: (method: string, path: string) => unknown;
};

/** Call before any route is added: records every route's path, methods and config. */
export function trackRouteMethods(app: FastifyInstance): RouteTable {
  const patterns = new Map<string, Pattern>();
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // One pattern per shape, whatever its parameters are named (`:id`, `:deploymentId`).
    const shape = route.url.replace(/:[^/]+/g, ":");
    let pattern = patterns.get(shape);
    if (pattern === undefined) {
      pattern = { regex: patternOf(route.url), rank: shape.split("/").map(kindOf), methods: new Map() };
      patterns.set(shape, pattern);
    }
    for (const method of methods) pattern.methods.set(method.toUpperCase(), route.config);
  });
  const best = (path: string, method: string) => {
    let found: Pattern | undefined;
    for (const pattern of patterns.values())
      if (
        pattern.regex.test(path) &&
        pattern.methods.has(method) &&
        (found === undefined || compareRank(pattern.rank, found.rank) < 0)
      )
        found = pattern;
    return found;
  };
  return {
    methodsAt: (path) => {
      const methods = new Set<string>();
      for (const pattern of patterns.values())
        if (pattern.regex.test(path)) for (const method of pattern.methods.keys()) methods.add(method);
      return [...methods].sort();
    },
    configAt: (method, path) => best(path, method)?.methods.get(method),
  };
}

/**
 * Route options of a GET of the control plane API: FastAPI's routes (APIRoute) serve the methods
 * they name and no other, so a HEAD of a GET-only path is 405 with `Allow: GET` there; fastify adds
 * a HEAD route to every GET unless told not to. The agent server's routes keep theirs: Starlette's
 * Route, which it is built on, serves HEAD beside GET. docs/control-plane.md "Validation and errors".
 */
export const FASTAPI_GET = { exposeHeadRoute: false } as const;
