import type { FastifyInstance, InjectOptions } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SYSTEM_ASSISTANT_ID } from "../../../src/control-plane/agent-server/assistants/assistant-store.js";
import { createAgentServerModule } from "../../../src/control-plane/agent-server/index.js";
import { buildApp, manualClock, testContext, type ManualClock, type TestContext } from "./test-context.js";

const base = "/agents/dep-1";
const headers = { "x-api-key": "key-acme" };

let clock: ManualClock;
let ctx: TestContext;
let app: FastifyInstance;

beforeEach(async () => {
  clock = manualClock();
  ctx = testContext({ clock, runSeconds: 1 });
  app = await buildApp(ctx, [createAgentServerModule(ctx)]);
});
afterEach(async () => app.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by the assertions
type Answer = { status: number; body: any; headers: Record<string, unknown> };
const call = async (method: "GET" | "POST" | "DELETE", url: string, payload?: object): Promise<Answer> => {
  const options: InjectOptions = { method, url: base + url, headers };
  if (payload !== undefined) options.payload = payload;
  const response = await app.inject(options);
  return {
    status: response.statusCode,
    body: response.body === "" ? undefined : response.json(),
    headers: response.headers,
  };
};
const newThread = async (): Promise<string> => String((await call("POST", "/threads", {})).body.thread_id);
const startRun = (threadId: string, content: string, extra: Record<string, unknown> = {}) =>
  call("POST", `/threads/${threadId}/runs`, {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content }] },
    ...extra,
  });
const messagesOf = async (threadId: string) =>
  (
    (await call("GET", `/threads/${threadId}/state`)).body.values.messages as Array<{
      type: string;
      content: string;
    }>
  ).map((m) => `${m.type}:${m.content}`);

describe("threads", () => {
  it("creates a thread with metadata and reads it back", async () => {
    const created = await call("POST", "/threads", { metadata: { team: "a" } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ metadata: { team: "a" }, status: "idle", values: { messages: [] } });
    expect(created.body.created_at).toBe("2026-01-01T00:00:00.000Z");
    const read = await call("GET", `/threads/${created.body.thread_id}`);
    expect(read.body).toEqual(created.body);
  });

  it("answers 404 for an unknown thread, an unknown deployment and another tenant's deployment", async () => {
    expect((await call("GET", "/threads/nope")).status).toBe(404);
    expect(
      (await app.inject({ method: "POST", url: "/agents/dep-2/threads", headers, payload: {} })).statusCode,
    ).toBe(404);
    const other = await app.inject({
      method: "POST",
      url: `${base}/threads`,
      headers: { "x-api-key": "key-other" },
      payload: {},
    });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ detail: "Deployment ID dep-1 not found." });
  });

  it("rejects a malformed body with an HTTPValidationError", async () => {
    const response = await call("POST", "/threads", { metadata: "x", thread_id: "not-a-uuid" });
    expect(response.status).toBe(422);
    expect(response.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["body", "metadata"],
      ["body", "thread_id"],
    ]);
  });

  it("persists a new thread before answering", async () => {
    const threadId = await newThread();
    const last = ctx.commits.at(-1) as {
      "agent-server": { deployments: Record<string, Array<{ thread_id: string }>> };
    };
    expect(last["agent-server"].deployments["dep-1"]?.map((t) => t.thread_id)).toEqual([threadId]);
  });
});

describe("runs", () => {
  it("answers ping with pong after the run time, and join returns the state values", async () => {
    const threadId = await newThread();
    const run = await startRun(threadId, "ping");
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      thread_id: threadId,
      assistant_id: SYSTEM_ASSISTANT_ID, // the graph's name resolves to its system assistant
      status: "pending",
      multitask_strategy: "enqueue",
    });
    expect(run.headers["content-location"]).toBe(`/threads/${threadId}/runs/${run.body.run_id}`);
    expect((await call("GET", `/threads/${threadId}/runs/${run.body.run_id}`)).body.status).toBe("running");
    expect((await call("GET", `/threads/${threadId}`)).body.status).toBe("busy");
    const join = call("GET", `/threads/${threadId}/runs/${run.body.run_id}/join`);
    await clock.advance(1000);
    const joined = await join;
    expect(
      joined.body.messages.map((m: { type: string; content: string }) => `${m.type}:${m.content}`),
    ).toEqual(["human:ping", "ai:pong"]);
    expect((await call("GET", `/threads/${threadId}/runs/${run.body.run_id}`)).body.status).toBe("success");
    const state = await call("GET", `/threads/${threadId}/state`);
    expect(state.body).toMatchObject({ next: [], checkpoint: { thread_id: threadId } });
    expect(state.body.values.messages.every((m: { id: unknown }) => typeof m.id === "string")).toBe(true);
  });

  it("echoes any other message", async () => {
    const threadId = await newThread();
    await startRun(threadId, "hello there");
    await clock.advance(1000);
    expect(await messagesOf(threadId)).toEqual(["human:hello there", "ai:hello there"]);
  });

  it("validates the run body and the assistant", async () => {
    const threadId = await newThread();
    const bad = await call("POST", `/threads/${threadId}/runs`, {
      multitask_strategy: "later",
      input: { messages: [{ role: "robot" }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc.join("."))).toEqual([
      "body.assistant_id",
      "body.input.messages.0.role",
      "body.input.messages.0.content",
      "body.multitask_strategy",
    ]);
    const unknownAssistant = await call("POST", `/threads/${threadId}/runs`, { assistant_id: "other" });
    expect(unknownAssistant.status).toBe(404);
    expect(unknownAssistant.body.detail).toContain('name the graph ("agent")');
    // Extra fields the SDK sends (stream_mode, config, ...) are accepted.
    const sdkShaped = await startRun(threadId, "x", {
      stream_mode: ["values"],
      config: {},
      durability: "async",
      checkpoint_during: null,
    });
    expect(sdkShaped.status).toBe(200);
  });

  it("reject: refuses a second run while one is in progress", async () => {
    const threadId = await newThread();
    await startRun(threadId, "one");
    const refused = await startRun(threadId, "two", { multitask_strategy: "reject" });
    expect(refused.status).toBe(409);
    await clock.advance(1000);
    expect((await startRun(threadId, "two", { multitask_strategy: "reject" })).status).toBe(200);
  });

  it("interrupt: the earlier run ends interrupted and is kept", async () => {
    const threadId = await newThread();
    const first = await startRun(threadId, "one");
    const second = await startRun(threadId, "two", { multitask_strategy: "interrupt" });
    expect((await call("GET", `/threads/${threadId}/runs/${first.body.run_id}`)).body.status).toBe(
      "interrupted",
    );
    await clock.advance(1000);
    expect((await call("GET", `/threads/${threadId}/runs/${second.body.run_id}`)).body.status).toBe(
      "success",
    );
    expect(await messagesOf(threadId)).toEqual(["human:one", "human:two", "ai:two"]);
  });

  it("rollback: the earlier run is deleted and its messages leave the state", async () => {
    const threadId = await newThread();
    await startRun(threadId, "zero");
    await clock.advance(1000);
    const first = await startRun(threadId, "one");
    const firstJoin = call("GET", `/threads/${threadId}/runs/${first.body.run_id}/join`);
    const second = await startRun(threadId, "two", { multitask_strategy: "rollback" });
    expect((await firstJoin).status).toBe(404);
    expect((await call("GET", `/threads/${threadId}/runs/${first.body.run_id}`)).status).toBe(404);
    await clock.advance(1000);
    expect((await call("GET", `/threads/${threadId}/runs/${second.body.run_id}`)).body.status).toBe(
      "success",
    );
    expect(await messagesOf(threadId)).toEqual(["human:zero", "ai:zero", "human:two", "ai:two"]);
    const listed = await call("GET", `/threads/${threadId}/runs`);
    expect(listed.body.map((r: { run_id: string }) => r.run_id)).not.toContain(first.body.run_id);
  });

  it("enqueue (default): the new run waits its turn", async () => {
    const threadId = await newThread();
    const first = await startRun(threadId, "one");
    const second = await startRun(threadId, "two");
    expect((await call("GET", `/threads/${threadId}/runs/${second.body.run_id}`)).body.status).toBe(
      "pending",
    );
    await clock.advance(1000);
    expect((await call("GET", `/threads/${threadId}/runs/${first.body.run_id}`)).body.status).toBe("success");
    expect((await call("GET", `/threads/${threadId}/runs/${second.body.run_id}`)).body.status).toBe(
      "running",
    );
    await clock.advance(1000);
    expect(await messagesOf(threadId)).toEqual(["human:one", "ai:one", "human:two", "ai:two"]);
  });

  it("lists runs newest first, filtered by status", async () => {
    const threadId = await newThread();
    const first = await startRun(threadId, "one");
    await clock.advance(1000);
    const second = await startRun(threadId, "two");
    const all = await call("GET", `/threads/${threadId}/runs`);
    expect(all.body.map((r: { run_id: string }) => r.run_id)).toEqual([
      second.body.run_id,
      first.body.run_id,
    ]);
    const done = await call("GET", `/threads/${threadId}/runs?status=success`);
    expect(done.body.map((r: { run_id: string }) => r.run_id)).toEqual([first.body.run_id]);
    expect((await call("GET", `/threads/${threadId}/runs?limit=0`)).status).toBe(422);
    // Read as the control plane reads its integers (FastAPI's lax int): `1.0` and `1_0` are
    // integers; `0x10`, a space, an empty value and `1e1` are not (Number() took them).
    for (const ok of ["1.0", "1_0", "%2B1"])
      expect((await call("GET", `/threads/${threadId}/runs?limit=${ok}`)).status, ok).toBe(200);
    for (const bad of ["0x10", "%205", "", "1e1", "Infinity"]) {
      const answer = await call("GET", `/threads/${threadId}/runs?offset=${bad}`);
      expect(answer.status, bad).toBe(422);
      expect(answer.body.detail, bad).toEqual([
        {
          loc: ["query", "offset"],
          msg: "Input should be a valid integer, unable to parse string as an integer",
          type: "int_parsing",
        },
      ]);
    }
    expect((await call("GET", `/threads/${threadId}/runs?limit=1001`)).body.detail[0]).toMatchObject({
      type: "less_than_equal",
    });
  });

  it("cancels a running run, and refuses to cancel a finished one", async () => {
    const threadId = await newThread();
    const run = await startRun(threadId, "one");
    const cancelled = await call("POST", `/threads/${threadId}/runs/${run.body.run_id}/cancel?wait=1`);
    expect(cancelled.status).toBe(204);
    expect((await call("GET", `/threads/${threadId}/runs/${run.body.run_id}`)).body.status).toBe(
      "interrupted",
    );
    expect((await call("POST", `/threads/${threadId}/runs/${run.body.run_id}/cancel`)).status).toBe(409);
    const rolled = await startRun(threadId, "two");
    await call("POST", `/threads/${threadId}/runs/${rolled.body.run_id}/cancel?action=rollback`);
    expect(await messagesOf(threadId)).toEqual(["human:one"]);
  });

  it("ends a run in error or timeout on request", async () => {
    const threadId = await newThread();
    const failing = await startRun(threadId, "raise error");
    await clock.advance(1000);
    expect((await call("GET", `/threads/${threadId}/runs/${failing.body.run_id}`)).body.status).toBe("error");
    expect((await call("GET", `/threads/${threadId}`)).body.status).toBe("error");
    const slow = await startRun(threadId, "raise timeout");
    await clock.advance(1000);
    expect((await call("GET", `/threads/${threadId}/runs/${slow.body.run_id}`)).body.status).toBe("timeout");
  });

  it("runs/wait creates a run and answers the state once it ends", async () => {
    const threadId = await newThread();
    const waiting = call("POST", `/threads/${threadId}/runs/wait`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "ping" }] },
    });
    await expect.poll(() => clock.pending()).toBe(1); // the run has started
    await clock.advance(1000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.messages.map((m: { content: string }) => m.content)).toEqual(["ping", "pong"]);
  });

  it("runs/wait on a run that fails answers {__error__: {error, message}}, as the open-source server does", async () => {
    const threadId = await newThread();
    const waiting = call("POST", `/threads/${threadId}/runs/wait`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "raise error" }] },
    });
    await expect.poll(() => clock.pending()).toBe(1);
    await clock.advance(1000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      __error__: { error: "GraphError", message: "the graph raised on request" },
    });
  });

  it("serves health and info", async () => {
    expect((await call("GET", "/ok")).body).toEqual({ ok: true });
    expect((await call("GET", "/info")).body).toMatchObject({ graphs: ["agent"] });
  });
});
