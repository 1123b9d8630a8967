import { EventSourceParserStream } from "eventsource-parser/stream";
import { orNull } from "./errors.js";
import { createHttpClient, type HttpClient, type HttpClientOptions } from "./transport/http.js";
import { eventSizeLimit } from "./transport/event-size-limit.js";
import { jsonTooDeep, MAX_RESPONSE_DEPTH, unexpectedResponse } from "./transport/response-body.js";
import type { CallOptions } from "./control-plane-client.js";
import { shapeCheck } from "../schema/validators.js";
import type { Run, Thread, ThreadState } from "./shapes.js";

export type AgentServerClientOptions = Omit<HttpClientOptions, "baseUrl" | "auth"> & {
  /** `{deployment_url}`, e.g. the deployment's `source_config.custom_url`; may carry a path prefix. */
  deploymentUrl: string;
  apiKey: string;
  tenantId?: string | undefined;
};

type RunRequest = {
  assistant_id: string;
  input: { messages: Array<{ role: string; content: string }> } & Record<string, unknown>;
  /** `rollback` lets a new check replace a stuck earlier one (spec 3.3). */
  multitask_strategy?: "rollback" | "interrupt" | "reject" | "enqueue";
};

/** One Server-Sent Event of a run's stream; `data` parsed from JSON (null without data). */
type StreamPart = { event: string; data: unknown; id: string | undefined };

type StreamRunRequest = RunRequest & {
  stream_mode: string[];
  /** `cancel`: the server cancels the run when plumb stops reading (verify timed out). */
  on_disconnect?: "cancel" | "continue";
};

export type AgentServerClient = {
  /** null when the thread does not exist (404), e.g. the deployment was recreated. */
  getThread(threadId: string, options?: CallOptions): Promise<Thread | null>;
  createThread(metadata?: Record<string, unknown>, options?: CallOptions): Promise<Thread>;
  createRun(threadId: string, body: RunRequest, options?: CallOptions): Promise<Run>;
  /** Waits for the run to finish; resolves to the thread's state values. Give it a long `timeoutMs`. */
  joinRun(
    threadId: string,
    runId: string,
    options?: CallOptions & { timeoutMs?: number },
  ): Promise<Record<string, unknown>>;
  /**
   * Creates a run and reads its event stream (POST /threads/{tid}/runs/stream) until the server
   * ends it. `timeoutMs` bounds the whole stream; the signal stops reading (and disconnects).
   */
  streamRun(
    threadId: string,
    body: StreamRunRequest,
    options?: CallOptions & { timeoutMs?: number },
  ): AsyncGenerator<StreamPart>;
  /**
   * A stateless run, streamed (POST /runs/stream): the server runs it on a temporary thread and
   * deletes that thread when the run ends. Same options as streamRun.
   */
  streamStatelessRun(
    body: Omit<StreamRunRequest, "multitask_strategy">,
    options?: CallOptions & { timeoutMs?: number },
  ): AsyncGenerator<StreamPart>;
  /** null when the run does not exist (404), e.g. after a rollback deleted it. */
  getRun(threadId: string, runId: string, options?: CallOptions): Promise<Run | null>;
  getState(threadId: string, options?: CallOptions): Promise<ThreadState>;
  readonly http: HttpClient;
};

// The answers' checks, compiled at build time (schema/validators.ts).
const shapes = {
  thread: shapeCheck("Thread"),
  run: shapeCheck("Run"),
  joinValues: shapeCheck("JoinValues"),
  threadState: shapeCheck("ThreadState"),
};
const seg = (value: string) => encodeURIComponent(value);

/** The run API of one deployed agent server (spec 4.4), for post-deploy verify. Same auth and retry core. */
export function createAgentServerClient(options: AgentServerClientOptions): AgentServerClient {
  const { deploymentUrl, apiKey, tenantId, ...transport } = options;
  const http = createHttpClient({
    ...transport,
    baseUrl: deploymentUrl,
    auth: { scheme: "api-key", apiKey, tenantId },
  });
  return {
    http,
    // A duplicate thread from a retried POST is harmless: verify only uses the one it gets back.
    createThread: (metadata, { signal } = {}) =>
      http.request<Thread>({
        method: "POST",
        path: "/threads",
        body: metadata ? { metadata } : {},
        schema: shapes.thread,
        idempotent: true,
        signal,
      }),
    // Not retried after an ambiguous failure: verify starts over with a new rollback run instead.
    createRun: (threadId, body, { signal } = {}) =>
      http.request<Run>({
        method: "POST",
        path: `/threads/${seg(threadId)}/runs`,
        route: "/threads/{thread_id}/runs",
        body,
        schema: shapes.run,
        signal,
      }),
    joinRun: (threadId, runId, { signal, timeoutMs } = {}) =>
      http.request({
        method: "GET",
        path: `/threads/${seg(threadId)}/runs/${seg(runId)}/join`,
        route: "/threads/{thread_id}/runs/{run_id}/join",
        schema: shapes.joinValues,
        timeoutMs,
        signal,
      }),
    // Not retried once sent, as createRun: a new verify starts over with a rollback run.
    streamRun: (threadId, body, { signal, timeoutMs } = {}) =>
      readEvents(http, {
        method: "POST",
        path: `/threads/${seg(threadId)}/runs/stream`,
        route: "/threads/{thread_id}/runs/stream",
        body,
        timeoutMs,
        signal,
      }),
    // Not retried once sent either: a check that failed is counted, not run twice.
    streamStatelessRun: (body, { signal, timeoutMs } = {}) =>
      readEvents(http, { method: "POST", path: "/runs/stream", body, timeoutMs, signal }),
    getThread: (threadId, { signal } = {}) =>
      orNull(
        http.request<Thread>({
          method: "GET",
          path: `/threads/${seg(threadId)}`,
          route: "/threads/{thread_id}",
          schema: shapes.thread,
          signal,
        }),
      ),
    getRun: (threadId, runId, { signal } = {}) =>
      orNull(
        http.request<Run>({
          method: "GET",
          path: `/threads/${seg(threadId)}/runs/${seg(runId)}`,
          route: "/threads/{thread_id}/runs/{run_id}",
          schema: shapes.run,
          signal,
        }),
      ),
    getState: (threadId, { signal } = {}) =>
      http.request<ThreadState>({
        method: "GET",
        path: `/threads/${seg(threadId)}/state`,
        route: "/threads/{thread_id}/state",
        schema: shapes.threadState,
        signal,
      }),
  };
}

/** The Server-Sent Events of a stream, each with its data parsed and bounded (MAX_EVENT_BYTES). */
async function* readEvents(
  http: HttpClient,
  spec: Parameters<HttpClient["openStream"]>[0],
): AsyncGenerator<StreamPart> {
  // Opened on the first read, as a generator's body runs: nothing is sent before someone reads.
  const stream = await http.openStream(spec);
  const events = stream
    .pipeThrough(eventSizeLimit(spec))
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  for await (const event of events) {
    // An event's JSON nested past the limit breaks whatever walks it later, as an answer's would.
    if (jsonTooDeep(event.data))
      throw unexpectedResponse(spec, [`an event's JSON nested deeper than ${MAX_RESPONSE_DEPTH} levels`]);
    yield { event: event.event ?? "message", data: parseData(event.data), id: event.id };
  }
}

/** An event's data: JSON, or the raw text when a server sends something else; null when empty. */
function parseData(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
