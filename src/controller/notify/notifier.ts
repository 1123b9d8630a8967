import { createHmac } from "node:crypto";
import { backoffDelay } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { buildNotifyPayload, type NotifyEvent, type NotifyEventName } from "./notify-payload.js";
import { originOf, receiverOf, sendNotification } from "./notify-send.js";
import type { Timers } from "../queue/work-queue.js";

// controller --notify URL: one JSON event per outcome POSTed to each URL, signed with HMAC-SHA256
// when a secret is set, retried with backoff, never awaited by a reconcile. Each receiver has its
// own queue, its own delivery slots and its own bound: a receiver that never answers holds only its
// own slots and drops only its own events (counted), so it delays no other receiver and costs
// memory for at most MAX_PENDING events. Redirects are never followed (notify-send.ts).
// A webhook URL often carries its secret in the path (Slack's do): logs name only its origin.

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
  /** Uniform in [0, 1): the retries' full jitter (default Math.random). */
  random?: () => number;
  timeoutMs?: number;
};

export type Notifier = {
  notify(event: NotifyEvent): void;
  /** Resolves when nothing is pending, or after `ms` (shutdown). */
  drain(ms: number): Promise<void>;
};

/** Per receiver: events queued, in flight or waiting for a retry beyond this are dropped. */
const MAX_PENDING = 1_000;
/** Per receiver: deliveries in flight at once. */
const MAX_IN_FLIGHT = 4;

export const signNotification = (secret: string, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

type Delivery = { event: NotifyEventName; body: string; attempt: number };

/** One receiver's queue: its waiting deliveries, its slots in flight and its pending count. */
type Lane = {
  url: string;
  receiver: ReturnType<typeof receiverOf>;
  waiting: Delivery[];
  inFlight: number;
  pending: number;
};

const laneOf = (url: string): Lane => ({
  url,
  receiver: receiverOf(url),
  waiting: [],
  inFlight: 0,
  pending: 0,
});

export function createNotifier(options: NotifierOptions): Notifier {
  const { timers, log } = options;
  const send = options.fetch ?? fetch;
  const retries = options.retries ?? 5;
  const baseMs = options.backoffBaseMs ?? 1_000;
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const lanes: Lane[] = options.urls.map(laneOf);
  let idle: Array<() => void> = [];
  const pendingTotal = () => lanes.reduce((sum, lane) => sum + lane.pending, 0);

  const finished = (lane: Lane, delivery: Delivery, result: "sent" | "failed") => {
    lane.pending--;
    options.counted?.(delivery.event, result);
    if (pendingTotal() === 0) for (const resolve of idle.splice(0)) resolve();
  };

  const pump = (lane: Lane) => {
    while (lane.inFlight < MAX_IN_FLIGHT && lane.waiting.length > 0) {
      const delivery = lane.waiting.shift()!;
      lane.inFlight++;
      void attempt(lane, delivery).finally(() => {
        lane.inFlight--;
        pump(lane);
      });
    }
  };

  async function attempt(lane: Lane, delivery: Delivery): Promise<void> {
    const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "plumb" };
    if (options.secret) headers["x-plumb-signature"] = signNotification(options.secret, delivery.body);
    if (lane.receiver.authorization) headers.authorization = lane.receiver.authorization;
    const result = await sendNotification(send, lane.receiver.url, {
      headers,
      body: delivery.body,
      timeoutMs,
      configured: lane.url,
    });
    if (result.ok) return finished(lane, delivery, "sent");
    if (!result.retryable || delivery.attempt >= retries) {
      log.warn(
        {
          receiver: originOf(lane.url),
          event: delivery.event,
          attempts: delivery.attempt + 1,
          problem: result.problem,
        },
        "notification not delivered",
      );
      return finished(lane, delivery, "failed");
    }
    const delay = backoffDelay(delivery.attempt + 1, { baseMs, maxMs: 60_000 }, random);
    timers.setTimeout(() => {
      lane.waiting.push({ ...delivery, attempt: delivery.attempt + 1 });
      pump(lane);
    }, delay);
  }

  return {
    notify(event) {
      const body = JSON.stringify(buildNotifyPayload(event, options.pageUrl, timers.now()));
      for (const lane of lanes) {
        if (lane.pending >= MAX_PENDING) {
          options.counted?.(event.event, "dropped");
          continue;
        }
        lane.pending++;
        lane.waiting.push({ event: event.event, body, attempt: 0 });
        pump(lane);
      }
    },
    drain: (ms) =>
      pendingTotal() === 0
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
