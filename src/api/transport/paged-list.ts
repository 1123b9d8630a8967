import type { ShapeCheck } from "../../schema/validators.js";
import type { Page } from "../../schema/deployment.js";
import { ApiConfigError } from "../config.js";
import { ApiError } from "../errors.js";
import type { HttpClient } from "./http.js";

// The control plane's lists, page by page (`limit`/`offset`): as pages, for callers that keep less
// than the whole list (the controller's live listing), or all at once.

/** Paths a user may have copied into the base URL: the API's own prefixes. */
const API_PREFIX = /\/(?:v\d+|api(?:\/v\d+)?)$/;

export function wrongApiUrl(apiUrl: string, path: string, cause: ApiError): ApiConfigError {
  const trimmed = apiUrl.replace(/\/+$/, "");
  const base = API_PREFIX.test(trimmed) ? trimmed.replace(API_PREFIX, "") : null;
  const advice = base
    ? `use the base URL without ${trimmed.slice(base.length)}: ${base}`
    : "use the control plane's base URL, without a path (e.g. https://api.example.com)";
  const error = new ApiConfigError(
    `the API URL ${trimmed} looks wrong: GET ${trimmed}${path} answered 404, so no control plane API is there; ${advice} (PLUMB_API_URL or --api-url)`,
  );
  return Object.assign(error, { cause });
}

const markOf = (items: readonly unknown[]): string =>
  `${items.length}:${JSON.stringify(items[0])}:${JSON.stringify(items[items.length - 1])}`;

const sameAgain = (path: string, before: number, now: number) =>
  new ApiError({
    code: "unexpected-response",
    status: 200,
    method: "GET",
    path,
    detail: `the page at offset ${now} is the page at offset ${before} again: the server, or a proxy before it, ignores the offset parameter, so the list would never end`,
  });

export function createPagedList(http: HttpClient, apiUrl: string, pageSize: number) {
  async function* pagesOf<T>(
    path: string,
    schema: ShapeCheck,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): AsyncGenerator<T[]> {
    // Every page seen, by its mark: a server alternating two pages (A, B, A, B, ...) repeated
    // neither the page before, and the list never ended.
    const seen = new Map<string, number>();
    for (let offset = 0; ;) {
      const page = await http
        .request<Page<T>>({
          method: "GET",
          path,
          query: { ...query, limit: pageSize, offset },
          schema,
          signal,
        })
        .catch((error: unknown) => {
          // A list the API always has answers 404 only when the base URL is not the API's.
          throw error instanceof ApiError && error.status === 404 ? wrongApiUrl(apiUrl, path, error) : error;
        });
      // A server (or a proxy before it) that ignores `offset` answers the first page again and
      // again: the list never ended and grew until the process died. Its first and last items
      // and its length name a page well enough: a real list never repeats them on the next page.
      const mark = markOf(page.resources);
      const before = page.resources.length > 0 ? seen.get(mark) : undefined;
      if (before !== undefined) throw sameAgain(path, before, offset);
      seen.set(mark, offset);
      yield page.resources;
      if (page.resources.length < pageSize) return;
      // `offset` is the next page's offset; fall back to counting if a server echoes the current one.
      offset = page.offset > offset ? page.offset : offset + page.resources.length;
    }
  }

  async function listAll<T>(
    path: string,
    schema: ShapeCheck,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): Promise<T[]> {
    const all: T[] = [];
    for await (const page of pagesOf<T>(path, schema, query, signal)) all.push(...page);
    return all;
  }

  return { pagesOf, listAll };
}
