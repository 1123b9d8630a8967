import type { IncomingMessage, ServerResponse } from "node:http";
import { loadPageScript } from "../../status-page/page-assets.js";
import type { ObjectDetail, PageHeader } from "../../status-page/page-header.js";
import { PAGE_CSS, PAGE_HTML, PAGE_SCRIPT_PATH, PAGE_STYLE_PATH } from "../../status-page/page-html.js";
import { type ObjectPage, type ObjectQuery, parseObjectQuery } from "../../status-page/page-model.js";
import type { EventStreams } from "./event-streams.js";
import {
  MATRIX_API_PATH,
  type MatrixPage,
  type MatrixQuery,
  parseMatrixQuery,
} from "../../status-page/matrix-model.js";

// The status page's routes on the controller's HTTP server: the page, its script and style (no
// data, served to anyone), and its JSON and live events (behind the status token, like /status).

export type PageRoutes = {
  /** `environment`: with environments, the one shown (`?env=NAME`); otherwise unused. */
  header(environment?: string): PageHeader;
  objects(query: ObjectQuery, environment?: string): ObjectPage;
  /** null when no such object is known. */
  detail(kind: string, name: string, environment?: string): Promise<ObjectDetail | null>;
  /** `write` gets Server-Sent Event text; returns the function that unsubscribes. */
  subscribe(write: (text: string) => void): () => void;
  /** With environments: each one's role and records (GET /ui/api/environments). */
  environments?(): unknown;
  /** With environments: the deployment × environment matrix (GET /ui/api/matrix; 404 without). */
  matrix?(query: MatrixQuery): Promise<MatrixPage>;
};

type Reply = (res: ServerResponse, code: number, body: unknown, type?: string) => void;

// The page loads only its own script, style and data; nothing inline, no frames.
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const asset = (res: ServerResponse, type: string, body: string) => {
  res.writeHead(200, { ...PAGE_HEADERS, "content-type": `${type}; charset=utf-8` });
  res.end(body);
};

/** The page's public assets; true when `path` was one of them. */
export function servePageAsset(path: string, res: ServerResponse): boolean {
  if (path === "/") asset(res, "text/html", PAGE_HTML);
  else if (path === PAGE_SCRIPT_PATH) asset(res, "text/javascript", loadPageScript());
  else if (path === PAGE_STYLE_PATH) asset(res, "text/css", PAGE_CSS);
  else return false;
  return true;
}

/**
 * The page's data routes (the caller checked the token); false when `path` is not one of them.
 * Live updates go through `streams`, the server's bounded set of open streams.
 */
export async function servePageData(
  routes: PageRoutes,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  reply: Reply,
  streams: EventStreams,
): Promise<boolean> {
  const send: Reply = (to, code, body) => reply(to, code, shownJson(body), "application/json; charset=utf-8");
  const params = new URL(req.url ?? "/", "http://x").searchParams;
  const environment = params.get("env") ?? undefined;
  if (path === "/ui/api/header") send(res, 200, routes.header(environment));
  else if (path === "/ui/api/objects") send(res, 200, routes.objects(parseObjectQuery(params), environment));
  else if (path === "/ui/api/environments" && routes.environments)
    send(res, 200, { environments: routes.environments() });
  else if (path === MATRIX_API_PATH && routes.matrix)
    send(res, 200, await routes.matrix(parseMatrixQuery(params)));
  else if (path.startsWith("/ui/api/objects/")) {
    const [kind = "", name = ""] = path.slice("/ui/api/objects/".length).split("/").map(safeDecode);
    const detail = kind && name ? await routes.detail(kind, name, environment) : null;
    if (detail) send(res, 200, detail);
    else send(res, 404, { detail: `no object ${kind}/${name}` });
  } else if (path === "/ui/events") streams.open(req, res, (write) => routes.subscribe(write));
  else return false;
  return true;
}

const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * The page's JSON with every bidirectional override or isolate in a string written as its escape
 * (`\u202e`), as the text formats print it: a server's message (or a value it quoted) holding one
 * was shown reordered, "Trojan Source" on the status page. /status, for programs, keeps the text.
 */
const shownJson = (body: unknown): string =>
  `${JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "string" ? value.replace(BIDI, (c) => `\\u${c.charCodeAt(0).toString(16)}`) : value,
  )}\n`;

const safeDecode = (part: string) => {
  try {
    return decodeURIComponent(part);
  } catch {
    return "";
  }
};
