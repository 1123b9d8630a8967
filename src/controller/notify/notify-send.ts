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
  init: { headers: Record<string, string>; body: string; timeoutMs: number },
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
      const to = location ? ` to ${originOf(location, url)}` : "";
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
