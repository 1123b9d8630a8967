import type { IncomingMessage, ServerResponse } from "node:http";
import { systemTimers, type Timers } from "../queue/work-queue.js";

// The status page's open Server-Sent Event streams, bounded: each holds a socket (a file
// descriptor) for as long as it is open, so one server keeps at most `max` of them (then 503 with
// Retry-After; the page tries again), ends each after `maxAgeMs` (the page reconnects in 2 s, so a
// tab left open somewhere or a half-open connection does not hold its slot all day), and ends one
// at once when its client stops reading (more than `maxBufferedBytes` waiting to be sent).

/** `write` gets Server-Sent Event text; returns the function that unsubscribes. */
type Subscribe = (write: (text: string) => void) => () => void;

export type EventStreams = {
  /** Answers `req` with a stream fed by `subscribe`, or 503 when `max` streams are open. */
  open(req: IncomingMessage, res: ServerResponse, subscribe: Subscribe): void;
  /** Streams open now. */
  size(): number;
  /**
   * Ends every open stream (the page reconnects in 2 s): when other handlers take over the socket
   * (standby → leader), a stream opened on the standby is fed by nothing, and the page it feeds
   * said "standby" with no objects for up to its 30 minutes while this controller led.
   */
  endAll(): void;
};

export const MAX_EVENT_STREAMS = 100;
const MAX_STREAM_AGE_MS = 30 * 60_000;
const MAX_BUFFERED_BYTES = 64 * 1024;

export function createEventStreams(
  options: { max?: number; maxAgeMs?: number; maxBufferedBytes?: number; timers?: Timers } = {},
): EventStreams {
  const max = options.max ?? MAX_EVENT_STREAMS;
  const maxAgeMs = options.maxAgeMs ?? MAX_STREAM_AGE_MS;
  const maxBuffered = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  const timers = options.timers ?? systemTimers;
  let open = 0;
  const ends = new Set<() => void>();
  return {
    size: () => open,
    endAll: () => {
      for (const end of [...ends]) end();
    },
    open(req, res, subscribe) {
      if (open >= max) {
        res.writeHead(503, {
          "content-type": "application/json",
          "cache-control": "no-store",
          "retry-after": "10",
        });
        res.end(
          `${JSON.stringify({ detail: `${max} live-update streams are open already; try again later` })}\n`,
        );
        return;
      }
      open++;
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        connection: "keep-alive",
      });
      res.flushHeaders();
      let ended = false;
      let unsubscribe = () => {};
      const end = () => {
        if (ended) return;
        ended = true;
        ends.delete(end);
        open--;
        unsubscribe();
        cancelAge();
        res.end();
      };
      ends.add(end);
      const cancelAge = timers.setTimeout(end, maxAgeMs);
      res.on("close", end);
      const unsubscribed = subscribe((text) => {
        if (ended) return;
        if (res.writableLength > maxBuffered) end();
        else res.write(text);
      });
      // A stream ended while subscribing (its first write already too much) unsubscribes at once.
      if (ended) unsubscribed();
      else unsubscribe = unsubscribed;
    },
  };
}
