import type { Timers } from "../queue/work-queue.js";

// The status page's live updates: changed object keys gathered for a short while and sent as one
// Server-Sent Event to every open page, so a startup of 10,000 creates is a few events a second,
// not 10,000. A comment line every 20 s keeps idle connections (and proxies) open.

const PAGE_EVENT_DELAY_MS = 250;
const MAX_KEYS_PER_EVENT = 100;
const HEARTBEAT_MS = 20_000;

export type PageEvents = {
  changed(key: string): void;
  /** `write` gets SSE text; returns the function that unsubscribes. */
  subscribe(write: (text: string) => void): () => void;
  close(): void;
};

export function createPageEvents(timers: Timers, delayMs = PAGE_EVENT_DELAY_MS): PageEvents {
  const subscribers = new Set<(text: string) => void>();
  const pending = new Set<string>();
  let cancelFlush: (() => void) | undefined;
  let cancelHeartbeat: (() => void) | undefined;

  const broadcast = (text: string) => {
    for (const write of subscribers) write(text);
  };
  const flush = () => {
    cancelFlush = undefined;
    const keys = [...pending];
    pending.clear();
    if (keys.length === 0) return;
    const shown = keys.slice(0, MAX_KEYS_PER_EVENT);
    broadcast(
      `event: changed\ndata: ${JSON.stringify({ keys: shown, more: keys.length - shown.length })}\n\n`,
    );
  };
  const heartbeat = () => {
    broadcast(": keep-alive\n\n");
    cancelHeartbeat = subscribers.size > 0 ? timers.setTimeout(heartbeat, HEARTBEAT_MS) : undefined;
  };

  return {
    changed(key) {
      if (subscribers.size === 0) return;
      pending.add(key);
      cancelFlush ??= timers.setTimeout(flush, delayMs);
    },
    subscribe(write) {
      subscribers.add(write);
      write(`retry: 2000\nevent: hello\ndata: {}\n\n`);
      cancelHeartbeat ??= timers.setTimeout(heartbeat, HEARTBEAT_MS);
      return () => subscribers.delete(write);
    },
    close() {
      cancelFlush?.();
      cancelHeartbeat?.();
      subscribers.clear();
    },
  };
}
