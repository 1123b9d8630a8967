import { PlumbError } from "../errors.js";
import type { SettingHints } from "./errors.js";
import { readSettingFile, settingFileReason } from "./setting-file.js";
import {
  type AllowedOrigins,
  type AllowFlags,
  allowedOriginsFrom,
  checkApiOrigin,
} from "./allowed-origins.js";

/** Where and how to reach the APIs. Hold the key only here; print it only through redactKey(). */
export type ApiOptions = {
  apiUrl: string;
  apiKey: string;
  /**
   * The file the key was read from (--api-key-file, an Environment's `api_key: {file}`): read again
   * when the server answers 401, so a key rotated in place (a mounted Secret) is taken up without a
   * restart (transport/http-retries.ts).
   */
  apiKeyFile?: string | undefined;
  tenantId?: string | undefined;
  /** `{platform_url}` of the organization settings; defaults to apiUrl. */
  platformUrl: string;
  /**
   * The installation's mode for a server that does not report it (PLUMB_MODE / --mode): plan
   * refuses what that mode cannot create. A plumb control plane reports its own through GET /info.
   */
  mode?: ServerModeSetting | undefined;
  /**
   * The origins a credential may go to (--allow-api-origin, PLUMB_ALLOWED_API_ORIGINS); undefined:
   * not pinned. The transport checks every URL it sends the key to (an agent server's) against it.
   */
  allowedOrigins?: AllowedOrigins | undefined;
  /**
   * Where the key, tenant and URL were read from when not PLUMB_API_KEY, PLUMB_TENANT_ID and
   * PLUMB_API_URL (an Environment's spec, for the controller): the transport's errors name them.
   */
  settingHints?: SettingHints | undefined;
};

type ServerMode = "saas" | "self-hosted";
export type ServerModeSetting = { mode: ServerMode; from: "--mode" | "PLUMB_MODE" };
const SERVER_MODES: readonly string[] = ["saas", "self-hosted"];

/** Command-line flags; each overrides its environment variable. No `--api-key`: argv is visible to `ps`. */
export type ApiFlags = AllowFlags & {
  apiUrl?: string;
  apiKeyFile?: string;
  tenantId?: string;
  platformUrl?: string;
  mode?: string;
};

export class ApiConfigError extends PlumbError {
  constructor(message: string) {
    super("api-config", message, { exitCode: 1 });
    this.name = "ApiConfigError";
  }
}

/** Shows enough of a key to tell two apart, never enough to use it. */
export function redactKey(key: string): string {
  return key.length >= 20 ? `****${key.slice(-4)}` : "****";
}

const nonEmpty = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
};

function parseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiConfigError(`${source} is not a URL; expected e.g. http://127.0.0.1:8123`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiConfigError(`${source} must be an http or https URL, got ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ApiConfigError(`${source} must not carry credentials; set PLUMB_API_KEY or --api-key-file`);
  }
  // The API's paths are appended to it: a query or a fragment ends up before them (every call then
  // answered 404, and the message quoted the URL, a `?code=` token with it). Not echoed.
  if (url.search || url.hash) {
    throw new ApiConfigError(
      `${source} must not carry a query (?...) or a fragment (#...): plumb appends the API's paths to it; give the base URL and the key in PLUMB_API_KEY or --api-key-file`,
    );
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * What an HTTP header can carry of a key: printable ASCII. fetch refuses a line break or a control
 * character (and anything past U+00FF) in a header before sending, and that failed as a `network`
 * error blaming the URL ("is the server running?"), after the retries of a GET.
 */
const UNSENDABLE_KEY = /[^\x20-\x7e]/;

export function sendableKey(key: string, source: string): string {
  if (UNSENDABLE_KEY.test(key))
    throw new ApiConfigError(
      `the API key from ${source} holds a line break, a control character or a non-ASCII character, which an HTTP header cannot carry; it must hold the key alone, on one line`,
    );
  return key;
}

/**
 * A tenant id goes in a header too: one holding a line break or a control character made fetch
 * refuse every request before sending, reported as a network failure ("could not reach ...; is the
 * server running?") against a control plane that was up. Not echoed.
 */
export function sendableTenant(tenantId: string, source: string): string {
  if (UNSENDABLE_KEY.test(tenantId))
    throw new ApiConfigError(
      `the tenant id from ${source} holds a line break, a control character or a non-ASCII character, which an HTTP header cannot carry; it must hold the tenant id alone, on one line`,
    );
  return tenantId;
}

function readKeyFile(path: string, readFile: (path: string) => string): string {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new ApiConfigError(`cannot read --api-key-file ${path} (${settingFileReason(error)})`);
  }
  const key = nonEmpty(text);
  if (!key) throw new ApiConfigError(`--api-key-file ${path} is empty`);
  return sendableKey(key, `--api-key-file ${path}`);
}

/**
 * Reads PLUMB_API_URL, PLUMB_API_KEY (or --api-key-file), PLUMB_TENANT_ID, PLUMB_PLATFORM_URL;
 * flags override the environment. Throws ApiConfigError naming what to set. With an allowlist of
 * origins (allowed-origins.ts) the API and platform URLs are checked before the key is read.
 */
export function readApiOptions(
  env: Record<string, string | undefined> = process.env,
  flags: ApiFlags = {},
  readFile: (path: string) => string = readSettingFile,
): ApiOptions {
  const urlText = nonEmpty(flags.apiUrl) ?? nonEmpty(env.PLUMB_API_URL);
  if (!urlText) throw new ApiConfigError("no API URL: set PLUMB_API_URL or pass --api-url");
  const urlSource = flags.apiUrl ? "--api-url" : "PLUMB_API_URL";
  const apiUrl = parseUrl(urlText, urlSource);
  const allowedOrigins = allowedOriginsFrom(flags, env);
  checkApiOrigin(apiUrl, allowedOrigins, urlSource);
  const platformText = nonEmpty(flags.platformUrl) ?? nonEmpty(env.PLUMB_PLATFORM_URL);
  const platformSource = flags.platformUrl ? "--platform-url" : "PLUMB_PLATFORM_URL";
  const platformUrl = platformText ? parseUrl(platformText, platformSource) : apiUrl;
  if (platformText) checkApiOrigin(platformUrl, allowedOrigins, platformSource);
  const keyFile = nonEmpty(flags.apiKeyFile);
  const apiKey = keyFile ? readKeyFile(keyFile, readFile) : nonEmpty(env.PLUMB_API_KEY);
  if (!apiKey) throw new ApiConfigError("no API key: set PLUMB_API_KEY or pass --api-key-file PATH");
  if (!keyFile) sendableKey(apiKey, "PLUMB_API_KEY");
  const tenantId = nonEmpty(flags.tenantId) ?? nonEmpty(env.PLUMB_TENANT_ID);
  if (tenantId !== undefined) sendableTenant(tenantId, flags.tenantId ? "--tenant-id" : "PLUMB_TENANT_ID");
  const mode = readModeSetting(flags.mode, env.PLUMB_MODE);
  return {
    apiUrl,
    apiKey,
    platformUrl,
    ...(keyFile ? { apiKeyFile: keyFile } : {}),
    ...(tenantId ? { tenantId } : {}),
    ...(mode ? { mode } : {}),
    ...(allowedOrigins ? { allowedOrigins } : {}),
  };
}

/**
 * The key in `path` now, or undefined when it cannot be read, is empty or cannot be sent in a header
 * (the old key is kept then).
 */
export function readKeyFileAgain(
  path: string,
  readFile: (path: string) => string = readSettingFile,
): string | undefined {
  try {
    const key = nonEmpty(readFile(path));
    return key === undefined || UNSENDABLE_KEY.test(key) ? undefined : key;
  } catch {
    return undefined;
  }
}

function readModeSetting(flag: string | undefined, env: string | undefined): ServerModeSetting | undefined {
  const from = nonEmpty(flag) ? "--mode" : "PLUMB_MODE";
  const text = nonEmpty(flag) ?? nonEmpty(env);
  if (text === undefined) return undefined;
  if (!SERVER_MODES.includes(text))
    throw new ApiConfigError(`${from} must be saas or self-hosted, got ${JSON.stringify(text)}`);
  return { mode: text as ServerMode, from };
}
