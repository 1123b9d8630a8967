import type { FastifyReply } from "fastify";
import type { RunEvent, RunEvents } from "../runs/run-events.js";
import type { StreamMode } from "../validation.js";

/**
 * Writes one run's events to a client as Server-Sent Events: the logged events after
 * `Last-Event-ID` first, then live ones, each with its `id:`; a `: heartbeat` comment while
 * nothing happens so proxies keep the connection; the response ends after `end`.
 */

export type SseOptions = {
  runId: string;
  /** Modes this connection asked for; undefined: every mode (a join without stream_mode). */
  modes: readonly StreamMode[] | undefined;
  /** Events up to this id were received already (Last-Event-ID). */
  after: number;
  heartbeatMs: number;
  /** Paths for the SDK: the run (content-location) and where to reconnect (location). */
  runPath: string;
  joinPath: string;
  /** Called when the client goes away before the stream ended. */
  onDisconnect: () => void;
};

/** Open streams, so a server that shuts down can end them instead of waiting for them. */
export type OpenStreams = Set<() => void>;

/** Every event has a data line (`null` for `end`): an EventSource drops events without data. */
export function formatEvent(event: Pick<RunEvent, "id" | "event" | "data">): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\nid: ${event.id}\n\n`;
}

/** Takes the response over from fastify and sends the headers of an event stream. */
export function startEventStream(reply: FastifyReply, headers: Record<string, string> = {}) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...headers,
  });
  return res;
}

export function writeRunStream(
  reply: FastifyReply,
  events: RunEvents,
  open: OpenStreams,
  options: SseOptions,
): void {
  const log = events.get(options.runId);
  if (log === undefined) throw new Error(`no event log for run ${options.runId}`);
  const res = startEventStream(reply, { "content-location": options.runPath, location: options.joinPath });
  let sent = options.after;
  let finished = false;
  const wanted = (event: RunEvent) =>
    event.mode === "always" || options.modes === undefined || options.modes.includes(event.mode);

  const flush = () => {
    const pending = log.events.filter((event) => event.id > sent && wanted(event));
    sent = Math.max(sent, log.events.at(-1)?.id ?? sent);
    if (pending.length > 0) res.write(pending.map(formatEvent).join(""));
    if (log.done) finish();
  };
  const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), options.heartbeatMs);
  heartbeat.unref();
  const unsubscribe = events.subscribe(options.runId, flush);
  const finish = () => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    unsubscribe();
    open.delete(finish);
    res.end();
  };
  open.add(finish);
  res.on("close", () => {
    if (finished) return;
    finish();
    options.onDisconnect();
  });
  flush();
}
