import type { FastifyInstance, FastifyReply } from "fastify";
import { invalid, type AgentRoutesDeps, type Req, type Route, type RouteKit } from "../route-kit.js";
import { formatEvent, startEventStream } from "../streaming/sse.js";
import type { ThreadEvent, ThreadEvents } from "./thread-events.js";
import type { RunRecord, ThreadRecord } from "../types.js";
import { parseStreamModes, type StreamMode, type ValidationIssue } from "../validation.js";

/**
 * `GET /threads/{tid}/stream` (SDK `threads.joinStream`, docs/control-plane.md "Thread stream"),
 * as the hosted agent server serves it: the events of each run on the thread, one after the
 * other, until the client leaves. Modes: `run_modes` (the default: each run's events in the
 * modes it was created with, and `metadata {status: "run_done"}` when it ends), `lifecycle`
 * (only the runs' start and done `metadata`), `state_update` (state edits). Without
 * `Last-Event-ID` only new events; with it, the kept events after that id first (`-1` or `0`: all).
 */

const THREAD_STREAM_MODES = ["run_modes", "lifecycle", "state_update"] as const;
type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];

/** `stream_mode` (repeatable: the JS SDK) or `stream_modes` (comma-separated: the Python SDK). */
function parseThreadModes(query: Record<string, unknown>, issues: ValidationIssue[]): ThreadStreamMode[] {
  const given = [query.stream_mode, query.stream_modes]
    .flatMap((raw) => (raw === undefined ? [] : Array.isArray(raw) ? (raw as unknown[]) : [raw]))
    .flatMap((raw) => (typeof raw === "string" ? raw.split(",").map((mode) => mode.trim()) : [raw]));
  const modes: ThreadStreamMode[] = [];
  for (const mode of given) {
    if (typeof mode === "string" && (THREAD_STREAM_MODES as readonly string[]).includes(mode))
      modes.push(mode as ThreadStreamMode);
    else
      issues.push({
        loc: ["query", "stream_mode"],
        msg: `Input should be ${THREAD_STREAM_MODES.map((m) => `'${m}'`).join(", ")}`,
        type: "literal_error",
      });
  }
  return modes.length > 0 ? modes : ["run_modes"];
}

const isLifecycle = (event: ThreadEvent) => {
  const data = event.data as Record<string, unknown> | null;
  return event.event === "metadata" && data !== null && ("attempt" in data || data.status === "run_done");
};

export function registerThreadStreamRoutes(
  app: FastifyInstance,
  { ctx, threadEvents, openStreams }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const heartbeatMs = ctx.streamHeartbeatSeconds * 1000;

  app.get<Route>(kit.path("/threads/:threadId/stream"), kit.opts, async (request: Req, reply) => {
    const issues: ValidationIssue[] = [];
    const modes = parseThreadModes(request.query, issues);
    const rawLast = request.headers["last-event-id"];
    const after = rawLast === undefined ? undefined : Number(rawLast);
    if (after !== undefined && !Number.isInteger(after))
      issues.push({
        loc: ["header", "last-event-id"],
        msg: "Input should be the id of an event of this thread's stream (an integer)",
        type: "int_parsing",
      });
    if (issues.length > 0) return invalid(reply, issues);
    const thread = kit.findThread(request, reply);
    if (thread === undefined) return reply;
    writeThreadStream(reply, threadEvents, openStreams, {
      deploymentId: request.params.deploymentId,
      thread,
      modes,
      after,
      heartbeatMs,
    });
    return reply;
  });
}

/** A run's own modes (`values` when it named none): what its own stream would send. */
const runModes = (run: RunRecord | undefined): readonly StreamMode[] => {
  const modes = parseStreamModes(run?.kwargs?.stream_mode, [], []);
  return modes !== undefined && modes.length > 0 ? modes : ["values"];
};

function writeThreadStream(
  reply: FastifyReply,
  threadEvents: ThreadEvents,
  open: Set<() => void>,
  options: {
    deploymentId: string;
    thread: ThreadRecord;
    modes: readonly ThreadStreamMode[];
    after: number | undefined;
    heartbeatMs: number;
  },
): void {
  const { deploymentId, thread, modes } = options;
  const log = threadEvents.log(deploymentId, thread.thread_id);
  const res = startEventStream(reply);
  const ownModes = new Map<string, readonly StreamMode[]>();
  const modesOf = (runId: string) => {
    let found = ownModes.get(runId);
    if (found === undefined) {
      found = runModes(thread.runs.find((run) => run.run_id === runId));
      ownModes.set(runId, found);
    }
    return found;
  };
  const wanted = (event: ThreadEvent) =>
    (modes.includes("state_update") && event.mode === "state_update") ||
    (modes.includes("lifecycle") && isLifecycle(event)) ||
    (modes.includes("run_modes") &&
      event.mode !== "state_update" &&
      (event.mode === "always" || (event.runId !== undefined && modesOf(event.runId).includes(event.mode))));

  // Without Last-Event-ID, only what happens from now on.
  let sent = options.after === undefined ? (log.events.at(-1)?.id ?? 0) : Math.max(options.after, 0);
  let finished = false;
  const flush = () => {
    const pending = log.events.filter((event) => event.id > sent);
    sent = Math.max(sent, pending.at(-1)?.id ?? sent);
    const text = pending.filter(wanted).map(formatEvent).join("");
    if (text !== "") res.write(text);
    if (log.deleted) finish();
  };
  const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), options.heartbeatMs);
  heartbeat.unref();
  const unsubscribe = threadEvents.subscribe(deploymentId, thread.thread_id, flush);
  const finish = () => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    unsubscribe();
    open.delete(finish);
    res.end();
  };
  open.add(finish);
  res.on("close", finish);
  flush();
}
