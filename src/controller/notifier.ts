import { createHmac } from "node:crypto";
import type { Logger } from "../logger.js";
import type { Timers } from "./work-queue.js";

// controller --notify URL: one JSON event per outcome POSTed to each URL, signed with HMAC-SHA256
// when a secret is set, retried with backoff, never awaited by a reconcile. Deliveries beyond a
// bound are dropped and counted, so a dead receiver costs memory for at most MAX_PENDING events.
// A webhook URL often carries its secret in the path (Slack's do): logs name only its origin.

type NotifyEventName = "applied" | "failed" | "drift-detected" | "drift-healed" | "pruned" | "lock-lost";

export type NotifyEvent = {
  event: NotifyEventName;
  object: { kind: string; name: string } | null;
  id: string | null;
  revision: string | null;
  /** Fields that changed or drifted (dotted API paths); never values. */
  fields: string[];
  message: string;
};

/** What is POSTed: the event, a `text` line for Slack-compatible receivers, a link and the time. */
type NotifyPayload = NotifyEvent & { text: string; link: string | null; at: string; source: "plumb" };

export type NotifierOptions = {
  urls: readonly string[];
  /** Signs each body: `X-Plumb-Signature: sha256=<hex HMAC-SHA256>`. */
  secret?: string | undefined;
  /** The status page as people reach it; events link to the object's detail view there. */
  pageUrl?: string | undefined;
  timers: Timers;
  log: Logger;
  fetch?: typeof fetch | undefined;
  /** Counts each delivery's end: sent, failed (gave up) or dropped (over the bound). */
  counted?: (event: NotifyEventName, result: "sent" | "failed" | "dropped") => void;
  retries?: number;
  backoffBaseMs?: number;
  timeoutMs?: number;
};

export type Notifier = {
  notify(event: NotifyEvent): void;
  /** Resolves when nothing is pending, or after `ms` (shutdown). */
  drain(ms: number): Promise<void>;
};

const MAX_PENDING = 1_000;
const MAX_IN_FLIGHT = 4;

export const signNotification = (secret: string, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

const origin = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
};

const ICON: Record<NotifyEventName, string> = {
  applied: "✅",
  failed: "❌",
  "drift-detected": "⚠️",
  "drift-healed": "🔧",
  pruned: "🗑️",
  "lock-lost": "🔒",
};

function buildNotifyPayload(event: NotifyEvent, pageUrl: string | undefined, now: number): NotifyPayload {
  const what = event.object ? `${event.object.kind} ${event.object.name}` : "controller";
  const fields = event.fields.length > 0 ? ` (${event.fields.join(", ")})` : "";
  const link =
    pageUrl && event.object
      ? `${pageUrl.replace(/\/$/, "")}/#/object/${encodeURIComponent(event.object.kind)}/${encodeURIComponent(event.object.name)}`
      : (pageUrl ?? null);
  return {
    source: "plumb",
    ...event,
    text: `${ICON[event.event]} plumb: ${what} ${event.event}${fields}: ${event.message}`,
    link,
    at: new Date(now).toISOString(),
  };
}

type Delivery = { url: string; event: NotifyEventName; body: string; attempt: number };

export function createNotifier(options: NotifierOptions): Notifier {
  const { timers, log } = options;
  const send = options.fetch ?? fetch;
  const retries = options.retries ?? 5;
  const baseMs = options.backoffBaseMs ?? 1_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const waiting: Delivery[] = [];
  let inFlight = 0;
  let pending = 0; // waiting + in flight + in a backoff pause
  let idle: Array<() => void> = [];

  const finished = (delivery: Delivery, result: "sent" | "failed") => {
    pending--;
    options.counted?.(delivery.event, result);
    if (pending === 0) for (const resolve of idle.splice(0)) resolve();
  };

  const pump = () => {
    while (inFlight < MAX_IN_FLIGHT && waiting.length > 0) {
      const delivery = waiting.shift()!;
      inFlight++;
      void attempt(delivery).finally(() => {
        inFlight--;
        pump();
      });
    }
  };

  async function attempt(delivery: Delivery): Promise<void> {
    const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "plumb" };
    if (options.secret) headers["x-plumb-signature"] = signNotification(options.secret, delivery.body);
    let problem: string;
    let retryable = true;
    try {
      const response = await send(delivery.url, {
        method: "POST",
        headers,
        body: delivery.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok) return finished(delivery, "sent");
      problem = `HTTP ${response.status}`;
      // A receiver that refuses the request will refuse it again; 408 and 429 mean "later".
      retryable = response.status >= 500 || response.status === 408 || response.status === 429;
    } catch (error) {
      problem = (error as Error).name === "TimeoutError" ? "timed out" : "no answer";
    }
    if (!retryable || delivery.attempt >= retries) {
      log.warn(
        { receiver: origin(delivery.url), event: delivery.event, attempts: delivery.attempt + 1, problem },
        "notification not delivered",
      );
      return finished(delivery, "failed");
    }
    const delay = Math.min(baseMs * 2 ** delivery.attempt, 60_000);
    timers.setTimeout(() => {
      waiting.push({ ...delivery, attempt: delivery.attempt + 1 });
      pump();
    }, delay);
  }

  return {
    notify(event) {
      const body = JSON.stringify(buildNotifyPayload(event, options.pageUrl, timers.now()));
      for (const url of options.urls) {
        if (pending >= MAX_PENDING) {
          options.counted?.(event.event, "dropped");
          continue;
        }
        pending++;
        waiting.push({ url, event: event.event, body, attempt: 0 });
      }
      pump();
    },
    drain: (ms) =>
      pending === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            idle.push(resolve);
            timers.setTimeout(() => {
              idle = idle.filter((r) => r !== resolve);
              resolve();
            }, ms);
          }),
  };
}
