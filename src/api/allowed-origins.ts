import { PlumbError, UsageError } from "../errors.js";

// The API origins plumb may send a credential to, given outside the repository (docs/security.md
// "Pinning where the key goes"): `--allow-api-origin ORIGIN` (repeatable) or
// PLUMB_ALLOWED_API_ORIGINS (comma-separated). An Environment's api_url, PLUMB_API_URL, a platform
// URL and an agent server's URL are each compared by origin (scheme, host, port, as the WHATWG URL
// parser writes them: lower-case host, no default port, IPv6 in brackets and compressed, an IPv4
// address in dotted decimal, no user name) before any key is read or sent. Pure.

export type AllowedOrigins = {
  readonly origins: ReadonlySet<string>;
  /** Where the list was given, for messages. */
  readonly from: "--allow-api-origin" | "PLUMB_ALLOWED_API_ORIGINS";
};

export type AllowFlags = { allowApiOrigin?: readonly string[] | undefined };

const ALLOWED_ORIGINS_VARIABLE = "PLUMB_ALLOWED_API_ORIGINS";

/** `url`'s origin as compared; undefined when it is not an http(s) URL. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** One entry of the list: an http(s) origin and nothing more (a trailing `/` is allowed). */
export function parseAllowedOrigin(entry: string, from: AllowedOrigins["from"]): string {
  const text = entry.trim();
  const origin = originOf(text);
  // The parsed URL is the origin and a `/`: a path, a query, a fragment or a user name makes it longer.
  if (origin === undefined || new URL(text).href !== `${origin}/` || /[?#]/.test(text))
    throw new UsageError(
      `${from}: ${JSON.stringify(text)} is not an API origin; give scheme://host[:port] only (http or https, no path, query, fragment or user name), e.g. https://api.example.com`,
    );
  return origin;
}

/** The list the flags give, else the variable's; undefined when neither is set (nothing is pinned). */
export function allowedOriginsFrom(
  flags: AllowFlags,
  env: Record<string, string | undefined>,
): AllowedOrigins | undefined {
  const given = flags.allowApiOrigin ?? [];
  if (given.length > 0) return listOf(given, "--allow-api-origin");
  const text = env[ALLOWED_ORIGINS_VARIABLE]?.trim();
  if (!text) return undefined;
  const entries = text.split(",").filter((entry) => entry.trim() !== "");
  if (entries.length === 0)
    throw new UsageError(`${ALLOWED_ORIGINS_VARIABLE} names no origin; give e.g. https://api.example.com`);
  return listOf(entries, ALLOWED_ORIGINS_VARIABLE);
}

const listOf = (entries: readonly string[], from: AllowedOrigins["from"]): AllowedOrigins => ({
  origins: new Set(entries.map((entry) => parseAllowedOrigin(entry, from))),
  from,
});

/**
 * Throws api-origin-not-allowed unless `url`'s origin is listed (nothing to check without a list).
 * `what` names the setting and where it was written; the message shows the origin only.
 */
export function checkApiOrigin(url: string, allowed: AllowedOrigins | undefined, what: string): void {
  if (!allowed) return;
  const origin = originOf(url);
  if (origin !== undefined && allowed.origins.has(origin)) return;
  throw new PlumbError(
    "api-origin-not-allowed",
    `${what}: ${origin ?? "(not an http(s) URL)"} is not an allowed API origin (${allowed.from}: ${[...allowed.origins].join(", ")}); plumb sends its credentials to those origins only. Add it to ${allowed.from} if it is yours, else correct the URL`,
  );
}

/** The list with `url`'s origin added (a URL a listed control plane assigned); undefined stays unpinned. */
export function withOrigin(allowed: AllowedOrigins | undefined, url: string): AllowedOrigins | undefined {
  const origin = originOf(url);
  if (!allowed || origin === undefined) return allowed;
  return { ...allowed, origins: new Set([...allowed.origins, origin]) };
}
