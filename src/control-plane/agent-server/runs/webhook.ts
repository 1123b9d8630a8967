import { isIP } from "node:net";
import type { RunRecord, ThreadRecord } from "../types.js";
import { runError, runView, stateValues } from "../views.js";

/**
 * A run's `webhook` (docs/control-plane.md "Webhooks"): POSTed once the run ends with the run,
 * its outcome and the thread's values, as the open-source server sends it. Loopback URLs, and
 * the hosts the operator allowed (`--webhook-allow-host`), only: the local control plane must
 * not be made to call any other host. Each attempt has a timeout; a network error, 429 or 5xx is
 * retried, a few times, with a growing pause; redirects are not followed (a redirect could lead
 * to any host). Deliveries are not kept across a restart.
 */

const WEBHOOK_TIMEOUT_MS = 5000;
const ATTEMPTS = 3;
const PAUSE_MS = 250;

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** An allowed host as the URL parser writes it: lower case, IPv6 in brackets. */
const hostForm = (host: string) => {
  const lower = host.trim().toLowerCase();
  return isIP(lower) === 6 ? `[${lower}]` : lower;
};

/** Why a webhook URL is refused, or undefined when it may be called. */
export function webhookProblem(raw: unknown, allowHosts: readonly string[] = []): string | undefined {
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
  if (loopback || allowHosts.some((allowed) => hostForm(allowed) === host)) return undefined;
  return allowHosts.length === 0
    ? "plumb's local agent server calls loopback webhooks only (localhost, 127.0.0.0/8, [::1]); point the webhook at a local receiver, or start it with --webhook-allow-host HOST"
    : `plumb's local agent server calls loopback webhooks and the hosts of --webhook-allow-host only (${allowHosts.join(", ")}); ${host} is not one of them`;
}

export type WebhookSender = {
  send(thread: ThreadRecord, run: RunRecord, at: string): void;
  /** Stops deliveries in progress (server shutdown). */
  stop(): void;
};

export function createWebhookSender(allowHosts: readonly string[] = []): WebhookSender {
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
      if (typeof url !== "string" || webhookProblem(url, allowHosts) !== undefined) return;
      const failed = run.status === "error" || run.status === "timeout";
      const body = JSON.stringify({
        ...runView(run),
        run_started_at: run.started_at ?? run.created_at,
        run_ended_at: at,
        webhook_sent_at: new Date().toISOString(),
        values: stateValues(thread), // the state's values, as the open-source server sends them
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
