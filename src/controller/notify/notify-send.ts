// One attempt at delivering a notification: POST the body, never follow a redirect, and say
// whether a failure is worth retrying. A redirect is a failure: following it would hand the body and
// a valid signature to whatever host the receiver (or someone in its path) names.

export type SendResult = { ok: true } | { ok: false; problem: string; retryable: boolean };

/** The origin of a URL, or a word saying it is not one: logs name receivers by origin only. */
export const originOf = (url: string, base?: string): string => {
  try {
    return new URL(url, base).origin;
  } catch {
    return "(invalid URL)";
  }
};

/**
 * The parts of a webhook URL that may be its secret: path segments, query names and values, a
 * fragment, user name and password (4 characters or more, lower-cased as a host is).
 */
const secretPartsOf = (url: string): string[] => {
  if (!URL.canParse(url)) return [];
  const parsed = new URL(url);
  const parts = [
    ...parsed.pathname.split("/"),
    ...[...parsed.searchParams].flat(),
    parsed.hash.slice(1),
    decoded(parsed.username),
    decoded(parsed.password),
  ];
  return parts.map((part) => decoded(part).toLowerCase()).filter((part) => part.length >= 4);
};

/**
 * Where a redirect pointed, as its origin, unless that origin repeats part of the receiver's URL: a
 * receiver's text, `Location: http:SECRET` or `//SECRET.host/` has the path's token for a host,
 * which the origin alone still showed (lower-cased) in the log line. Then it is not named.
 */
function redirectTarget(location: string, url: string, secretsOf = url): string {
  const origin = originOf(location, url);
  const host = decoded(origin).toLowerCase();
  const bare = hostOnly(host);
  const cut = (part: string) => bare.length >= 8 && part.includes(bare);
  if (secretPartsOf(secretsOf).some((part) => host.includes(part) || cut(part)))
    return "an origin not shown (it repeats part of the --notify URL)";
  return origin;
}

/** The host of an origin (`https://a.b:8080` → `a.b`), to find a secret cut short to a host label. */
const hostOnly = (origin: string): string =>
  origin.replace(/^[a-z][a-z0-9+.-]*:\/\//, "").replace(/:\d+$/, "");

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a stray % stays as written
  }
};

/**
 * A receiver's URL as fetch takes it, and its credentials as a header: fetch refuses a URL with a
 * user name or password ("Request cannot be constructed from a URL that includes credentials"), so
 * `https://user:pass@hooks.example/x` failed every delivery as "no answer". Its credentials go as
 * `Authorization: Basic`, as curl sends them, to that origin only (no redirect is followed).
 */
export function receiverOf(url: string): { url: string; authorization?: string } {
  if (!URL.canParse(url)) return { url };
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return { url };
  const credentials = `${decoded(parsed.username)}:${decoded(parsed.password)}`;
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href, authorization: `Basic ${Buffer.from(credentials).toString("base64")}` };
}

export async function sendNotification(
  send: typeof fetch,
  url: string,
  init: {
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    /** The URL as configured (with the user:password `url` was stripped of): its parts are secrets. */
    configured?: string;
  },
): Promise<SendResult> {
  try {
    const response = await send(url, {
      method: "POST",
      headers: init.headers,
      body: init.body,
      redirect: "manual",
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    await response.body?.cancel();
    if (response.ok) return { ok: true };
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get("location");
      const to = location ? ` to ${redirectTarget(location, url, init.configured)}` : "";
      return {
        ok: false,
        problem: `HTTP ${response.status} redirect${to} not followed: give --notify the final URL`,
        retryable: false,
      };
    }
    // A receiver that refuses the request will refuse it again; 408 and 429 mean "later".
    const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
    return { ok: false, problem: `HTTP ${response.status}`, retryable };
  } catch (error) {
    return {
      ok: false,
      problem: (error as Error).name === "TimeoutError" ? "timed out" : "no answer",
      retryable: true,
    };
  }
}
