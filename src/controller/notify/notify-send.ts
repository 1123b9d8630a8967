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
