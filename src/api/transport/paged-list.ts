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

/**
 * The most of one list read. A server (or a proxy before it) that answers a new page for every
 * offset, each with a fresh cursor, passed the repeat check and was read until memory ran out.
 * A real tenant's list is far below both: 50,000 deployments, and 64 MiB of their JSON.
 */
const LIST_LIMITS = { maxItems: 50_000, maxBytes: 64 * 1024 * 1024 };

const tooLong = (path: string, offset: number, what: string) =>
  new ApiError({
    code: "unexpected-response",
    status: 200,
    method: "GET",
    path,
    detail: `the list passed ${what} at offset ${offset} and had not ended: plumb reads no more of one list, so that a server answering a new page for every offset cannot exhaust memory; check that PLUMB_API_URL (--api-url) is the control plane itself and not a proxy that rewrites paging`,
  });

export function createPagedList(http: HttpClient, apiUrl: string, pageSize: number) {
  const limits = LIST_LIMITS;
  async function* pagesOf<T>(
    path: string,
    schema: ShapeCheck,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): AsyncGenerator<T[]> {
    // Every page seen, by its mark: a server alternating two pages (A, B, A, B, ...) repeated
    // neither the page before, and the list never ended.
    const seen = new Map<string, number>();
    let items = 0;
    let bytes = 0;
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
      items += page.resources.length;
      bytes += JSON.stringify(page.resources).length;
      if (items > limits.maxItems)
        throw tooLong(path, offset, `${limits.maxItems.toLocaleString("en")} items`);
      if (bytes > limits.maxBytes) throw tooLong(path, offset, `${limits.maxBytes / 1024 / 1024} MiB`);
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
