import { isIP } from "node:net";
import type { RunRecord, ThreadRecord } from "./types.js";
import { outputValues, runError, runView } from "./views.js";

/**
 * A run's `webhook` (docs/control-plane.md "Webhooks"): POSTed once the run ends with the run,
 * its outcome and the thread's values, as the open-source server sends it. Loopback URLs only:
 * the local control plane must not be made to call other hosts. Each attempt has a timeout; a
 * network error, 429 or 5xx is retried, a few times, with a growing pause; redirects are not
 * followed. Deliveries are not kept across a restart.
 */

const WEBHOOK_TIMEOUT_MS = 5000;
const ATTEMPTS = 3;
const PAUSE_MS = 250;

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Why a webhook URL is refused, or undefined when it may be called. */
export function webhookProblem(raw: unknown): string | undefined {
  if (typeof raw !== "string") return "Input should be a URL string";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "Input should be a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return "The webhook should be an http or https URL";
  if (url.username !== "" || url.password !== "") return "The webhook URL should not hold credentials";
  const host = url.hostname;
  const loopback =
    LOOPBACK_NAMES.has(host) || (isIP(host) === 4 && host.startsWith("127.")) || host === "[::1]";
  if (!loopback)
    return "plumb's local agent server calls loopback webhooks only (localhost, 127.0.0.0/8, [::1]); point the webhook at a local receiver";
  return undefined;
}

export type WebhookSender = {
  send(thread: ThreadRecord, run: RunRecord, at: string): void;
  /** Stops deliveries in progress (server shutdown). */
  stop(): void;
};

export function createWebhookSender(): WebhookSender {
  const inFlight = new Set<AbortController>();
  const deliver = async (url: string, body: string, stop: AbortController) => {
    for (let attempt = 1; attempt <= ATTEMPTS && !stop.signal.aborted; attempt++) {
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          redirect: "manual",
          signal: AbortSignal.any([stop.signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
        });
        await response.body?.cancel();
        if (response.status !== 429 && response.status < 500) return;
      } catch {
        // unreachable or timed out: retried below
      }
      if (attempt < ATTEMPTS)
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * 2 ** (attempt - 1)));
    }
  };
  return {
    send(thread, run, at) {
      const url = run.kwargs?.webhook;
      if (typeof url !== "string" || webhookProblem(url) !== undefined) return;
      const failed = run.status === "error" || run.status === "timeout";
      const body = JSON.stringify({
        ...runView(run),
        run_ended_at: at,
        webhook_sent_at: new Date().toISOString(),
        values: outputValues(thread),
        ...(failed && { error: runError(run).message }),
      });
      const stop = new AbortController();
      inFlight.add(stop);
      void deliver(url, body, stop).finally(() => inFlight.delete(stop));
    },
    stop() {
      for (const stop of inFlight) stop.abort();
      inFlight.clear();
    },
  };
}
