import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../src/control-plane/server.js";
import { createAgentDeployment, gatedClock } from "./test-context.js";

// Interrupts on the real control plane through the SDK, where plumb decides what the open-source
// server leaves to the graph: breakpoints from an assistant's config, a run's kwargs, a failed
// run's join, and an interrupted thread kept across a restart.
const clock = gatedClock();
let cp: RunningControlPlane;
let sdk: Client;

const human = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (values: unknown) =>
  ((values as { messages?: Array<{ type: string; content: unknown }> }).messages ?? []).map(
    (m) => `${m.type}:${String(m.content)}`,
  );
async function held<T>(pending: Promise<T>): Promise<T> {
  await expect.poll(() => clock.waiting()).toBe(1);
  clock.release();
  return pending;
}

beforeAll(async () => {
  cp = await startControlPlane({ clock, runSeconds: 5, revisionSeconds: 0, deploymentReadySeconds: 0 });
  const id = await createAgentDeployment(cp.url, "interrupts");
  sdk = new Client({
    apiUrl: `${cp.url}/agents/${id}`,
    apiKey: DEFAULT_API_KEY,
    callerOptions: { maxRetries: 0 },
  });
});
afterAll(async () => cp?.stop());

describe("interrupts on plumb's agent server", () => {
  it("an assistant's config interrupt_before stops its runs; the run's own list wins", async () => {
    const assistant = await sdk.assistants.create({
      graphId: "agent",
      config: { interrupt_before: ["agent"] } as Record<string, unknown>,
    });
    const thread = await sdk.threads.create();
    await sdk.runs.wait(thread.thread_id, assistant.assistant_id, { input: human("hello") });
    expect((await sdk.threads.getState(thread.thread_id)).next).toEqual(["agent"]);
    const own = await held(
      sdk.runs.wait(thread.thread_id, assistant.assistant_id, { input: human("ping"), interruptBefore: [] }),
    );
    expect(texts(own)).toEqual(["human:hello", "human:ping", "ai:pong"]);
  });

  it("kwargs keep what the run was created with; a command goto to an unknown node is refused", async () => {
    const thread = await sdk.threads.create();
    const run = await sdk.runs.create(thread.thread_id, "agent", {
      input: human("hi"),
      config: { tags: ["a"] },
      interruptBefore: ["agent"],
      streamMode: ["values", "updates"],
    });
    const got = (await sdk.runs.get(thread.thread_id, run.run_id)) as unknown as { kwargs: unknown };
    expect(got.kwargs).toMatchObject({
      input: human("hi"),
      config: { tags: ["a"] },
      interrupt_before: ["agent"],
      stream_mode: ["values", "updates"],
    });
    await expect(
      sdk.runs.create(thread.thread_id, "agent", { command: { goto: "nowhere" } }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it("runs.join of a failed run answers {__error__}", async () => {
    const thread = await sdk.threads.create();
    const run = await sdk.runs.create(thread.thread_id, "agent", { input: human("raise error") });
    const joined = await held(sdk.runs.join(thread.thread_id, run.run_id));
    expect(joined).toEqual({
      __error__: { error: "GraphError", message: "the graph raised on request" },
    });
  });

  it("history shows each step: the input at -1, the node due, the answer", async () => {
    const thread = await sdk.threads.create();
    await held(sdk.runs.wait(thread.thread_id, "agent", { input: human("approve?") }));
    await held(sdk.runs.wait(thread.thread_id, "agent", { command: { resume: { ok: true } } }));
    const history = await sdk.threads.getHistory(thread.thread_id);
    expect(history.map((state) => [state.metadata?.source, state.metadata?.step, state.next])).toEqual([
      ["loop", 1, []],
      ["loop", 0, ["review"]],
      ["input", -1, ["__start__"]],
    ]);
    expect(texts(history[0]!.values)).toEqual(["human:approve?", 'ai:approved: {"ok":true}']);
    expect(history[0]!.parent_checkpoint?.checkpoint_id).toBe(history[1]!.checkpoint.checkpoint_id);
    expect(history[1]!.tasks[0]?.interrupts).toHaveLength(1);
  });

  it("a state update waits for the thread's run (409); a wrong node is 422, a wrong fork point 404", async () => {
    const thread = await sdk.threads.create();
    const running = sdk.runs.wait(thread.thread_id, "agent", { input: human("ping") });
    await expect.poll(() => clock.waiting()).toBe(1);
    const update = { values: human("late"), asNode: "agent" };
    await expect(sdk.threads.updateState(thread.thread_id, update)).rejects.toMatchObject({ status: 409 });
    clock.release();
    await running;
    await expect(
      sdk.threads.updateState(thread.thread_id, { values: human("x"), asNode: "nowhere" }),
    ).rejects.toMatchObject({ status: 422 });
    const unknown = "1f000000-0000-6000-8000-000000000000";
    await expect(
      sdk.runs.create(thread.thread_id, "agent", { input: null, checkpointId: unknown }),
    ).rejects.toMatchObject({ status: 404 });
    await sdk.threads.updateState(thread.thread_id, update);
    expect(texts((await sdk.threads.getState(thread.thread_id)).values)).toEqual([
      "human:ping",
      "ai:pong",
      "human:late",
    ]);
  });
});

describe("joins on plumb's agent server", () => {
  it("a join without streamMode gets the modes the run was created with", async () => {
    const thread = await sdk.threads.create();
    const run = await sdk.runs.create(thread.thread_id, "agent", {
      input: human("ping"),
      streamMode: ["updates"],
    });
    const events: string[] = [];
    const joined = (async () => {
      for await (const part of sdk.runs.joinStream(thread.thread_id, run.run_id)) events.push(part.event);
    })();
    await held(joined);
    expect(events).toContain("updates");
    expect(events).not.toContain("values");
  });
});
