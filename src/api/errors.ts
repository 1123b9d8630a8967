import { PlumbError } from "../errors.js";
import { networkHint } from "./network-hint.js";

/** One entry of a 422 HTTPValidationError body (spec 2.6). */
export type ValidationIssue = { loc: (string | number)[]; msg: string; type: string };

/** The server's `detail`: a string (400, 404, 409...) or the 422 list; null when the body had none. */
export type ErrorDetail = string | ValidationIssue[] | null;

export type ApiErrorCode =
  | "bad-request"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "validation"
  | "rate-limited"
  | "server-error"
  | "http-error"
  | "network"
  | "timeout"
  | "unexpected-response";

/** A field the server rejected, as a dotted API path (`source_config.resource_spec.cpu`). */
export type FieldError = { field: string; path: (string | number)[]; message: string; type: string };

/** Where a 422 `loc` can start; these segments say where the value was, not which field. */
const LOC_ROOTS = new Set(["body", "query", "path", "header"]);

/** `["body","source_config","resource_spec","cpu"]` → `["source_config","resource_spec","cpu"]`. */
export function locToPath(loc: readonly (string | number)[]): (string | number)[] {
  const [first, ...rest] = loc;
  return typeof first === "string" && LOC_ROOTS.has(first) ? rest : [...loc];
}

/** `["body","secrets",0,"name"]` → `secrets.0.name`; "" for the body as a whole. */
export function locToField(loc: readonly (string | number)[]): string {
  return locToPath(loc).map(String).join(".");
}

export type ApiErrorInit = {
  code: ApiErrorCode;
  status: number;
  method: string;
  path: string;
  detail?: ErrorDetail;
  /** True when the server may have carried out the request (timeout, reset, lost response, 5xx). */
  ambiguous?: boolean;
  /** Milliseconds the server asked us to wait (429 Retry-After). */
  retryAfterMs?: number;
  /** The server (origin) tried, named when no response came (never a path with a token). */
  url?: string;
  cause?: unknown;
};

/**
 * A failed API call. `status` is 0 when no HTTP response arrived (`network`, `timeout`).
 * The message names method, path, status and detail — never headers, bodies or the API key.
 */
export class ApiError extends PlumbError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly detail: ErrorDetail;
  readonly ambiguous: boolean;
  readonly retryAfterMs: number | undefined;
  /** What to do about it (the message's closing hint), for `-o json`'s error document; never a value. */
  fix: string | undefined;

  constructor(init: ApiErrorInit) {
    super(init.code, formatMessage(init), { cause: init.cause });
    this.fix = hintOf(init);
    this.name = "ApiError";
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.detail = init.detail ?? null;
    this.ambiguous = init.ambiguous ?? false;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** The 422 issues as field paths a caller can map back to manifest fields (`spec.` + field). */
  fieldErrors(): FieldError[] {
    if (!Array.isArray(this.detail)) return [];
    return this.detail.map((issue) => ({
      field: locToField(issue.loc),
      path: locToPath(issue.loc),
      message: issue.msg,
      type: issue.type,
    }));
  }
}

/** null for a 404 (the resource does not exist), the value otherwise. */
export async function orNull<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Maps an HTTP status to the error code callers branch on. */
export function codeForStatus(status: number): ApiErrorCode {
  switch (status) {
    case 400:
      return "bad-request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not-found";
    case 409:
      return "conflict";
    case 422:
      return "validation";
    case 429:
      return "rate-limited";
    default:
      return status >= 500 ? "server-error" : "http-error";
  }
}

const HINTS: Partial<Record<ApiErrorCode, string>> = {
  unauthorized: "check PLUMB_API_KEY (or --api-key-file)",
  forbidden: "check PLUMB_TENANT_ID: the key may reach several workspaces, or not this one",
  network: "check PLUMB_API_URL and that the server is reachable",
  // No flag or variable sets the per-request timeout (30 s): asking to raise it sent users looking.
  timeout: "the server did not answer in time; check that it is up and not overloaded, then try again",
};

/**
 * Where a client's settings were read from, when not PLUMB_API_KEY, PLUMB_TENANT_ID and
 * PLUMB_API_URL (an Environment's spec): each replaces the variable its error's hint names, e.g.
 * apiKey "environment prod's spec.api_key ($PROD_API_KEY, environments/prod.yaml:7)". Never a value.
 */
export type SettingHints = { apiKey: string; tenantId: string; apiUrl: string };

/** The error with its hint naming where the settings were read from (SettingHints). */
export function withSettingHints(error: ApiError, hints: SettingHints): ApiError {
  const named = (text: string) =>
    text
      .replace("check PLUMB_API_KEY (or --api-key-file)", `check ${hints.apiKey}`)
      .replace("check PLUMB_TENANT_ID", `check ${hints.tenantId}`)
      .replace("check PLUMB_API_URL", `check ${hints.apiUrl}`);
  error.message = named(error.message);
  if (error.fix !== undefined) error.fix = named(error.fix);
  return error;
}

function formatDetail(detail: ErrorDetail | undefined): string {
  if (detail === null || detail === undefined) return "";
  if (typeof detail === "string") return detail;
  return detail
    .map((issue) => {
      const field = locToField(issue.loc);
      return field ? `${field}: ${issue.msg}` : issue.msg;
    })
    .join("; ");
}

const hintOf = (init: ApiErrorInit): string | undefined =>
  init.code === "network" && init.url
    ? networkHint(typeof init.detail === "string" ? init.detail : undefined, init.url)
    : HINTS[init.code];

function formatMessage(init: ApiErrorInit): string {
  const what = init.status > 0 ? `${init.status}` : init.code;
  const detail = formatDetail(init.detail);
  const hint = hintOf(init);
  return (
    `${init.method} ${init.path} failed: ${what}` +
    (detail ? ` — ${detail}` : "") +
    (hint ? ` (${hint})` : "")
  );
}
