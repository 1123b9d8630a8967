import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lacks, startTarget, type ConformanceTarget } from "./target.js";

// The thread's stream through @langchain/langgraph-sdk (docs/control-plane.md "Thread stream"):
// threads.joinStream follows every run on a thread, as the hosted agent server serves it.
// The open-source dev server does not serve it (404): skipped there.

type Part = { event: string; data: unknown; id?: string };
type Message = { type: string; content: unknown };

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

const human = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (values: unknown) =>
  ((values as { messages?: Message[] }).messages ?? []).map((m) => `${m.type}:${String(m.content)}`);

/** Reads a stream into `parts` in the background until `stop()`. */
function follow(stream: (signal: AbortSignal) => AsyncIterable<Part>) {
  const parts: Part[] = [];
  const abort = new AbortController();
  const reading = (async () => {
    try {
      for await (const part of stream(abort.signal)) parts.push(part);
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return {
    parts,
    stop: async () => {
      abort.abort();
      await reading;
    },
  };
}

const runDone = (runId: string) => (parts: Part[]) =>
  parts.some(
    (part) =>
      part.event === "metadata" &&
      (part.data as { status?: string }).status === "run_done" &&
      (part.data as { run_id?: string }).run_id === runId,
  );

describe.skipIf(lacks("threadStream"))("SDK conformance: thread stream", () => {
  it("joinStream follows each run on the thread in its own modes; lastEventId replays after an id", async () => {
    const thread = await sdk.threads.create({ graphId: "agent" });
    const tid = thread.thread_id;
    const first = await sdk.runs.create(tid, "agent", { input: human("ping") });
    await target.untilHeld(1);
    target.release();
    await sdk.runs.join(tid, first.run_id);

    // From the start of what is kept (Last-Event-ID 0): the first run, then live the second.
    const all = follow((signal) => sdk.threads.joinStream(tid, { lastEventId: "0", signal }));
    await expect.poll(() => runDone(first.run_id)(all.parts), { timeout: target.settleMs }).toBe(true);
    const second = await sdk.runs.create(tid, "agent", { input: human("hello"), streamMode: ["updates"] });
    await target.untilHeld(1);
    // A run refused on the busy thread never shows on its stream.
    const refused = sdk.runs.create(tid, "agent", { input: human("no"), multitaskStrategy: "reject" });
    await expect(refused).rejects.toMatchObject({ status: target.rejectStatus });
    target.release();
    await expect.poll(() => runDone(second.run_id)(all.parts), { timeout: target.settleMs }).toBe(true);
    await all.stop();

    const runIds = all.parts.map((part) => (part.data as { run_id?: string } | null)?.run_id);
    expect(new Set(runIds.filter((id) => id !== undefined))).toEqual(new Set([first.run_id, second.run_id]));
    const events = all.parts.map((part) => part.event);
    expect(events).not.toContain("end");
    expect(all.parts[0]).toMatchObject({ event: "metadata", data: { run_id: first.run_id, attempt: 1 } });
    const values = all.parts.filter((part) => part.event === "values").map((part) => texts(part.data));
    expect(values).toEqual([["human:ping"], ["human:ping", "ai:pong"]]); // the first run's own mode
    const updates = all.parts.filter((part) => part.event === "updates");
    expect(updates.map((part) => part.data)).toEqual([
      { agent: { messages: [expect.objectContaining({ type: "ai", content: "hello" })] } },
    ]);
    const ids = all.parts.map((part) => Number(part.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    // Resumed after the first run's done event: only the second run's events.
    const doneAt = all.parts.findIndex((part) => runDone(first.run_id)([part]));
    const resumed = follow((signal) =>
      sdk.threads.joinStream(tid, { lastEventId: all.parts[doneAt]!.id!, signal }),
    );
    await expect.poll(() => runDone(second.run_id)(resumed.parts), { timeout: target.settleMs }).toBe(true);
    await resumed.stop();
    expect(resumed.parts).toEqual(all.parts.slice(doneAt + 1));
  });

  it("lifecycle sends only runs starting and ending; state_update sends state edits", async () => {
    const thread = await sdk.threads.create({ graphId: "agent" });
    const tid = thread.thread_id;
    const run = await sdk.runs.create(tid, "agent", {
      input: human("ping"),
      streamMode: ["values", "updates"],
    });
    await target.untilHeld(1);
    target.release();
    await sdk.runs.join(tid, run.run_id);
    await sdk.threads.updateState(tid, {
      values: { messages: [{ role: "assistant", content: "edited" }] },
      asNode: "agent",
    });

    const lifecycle = follow((signal) =>
      sdk.threads.joinStream(tid, { lastEventId: "0", streamMode: "lifecycle", signal }),
    );
    await expect.poll(() => runDone(run.run_id)(lifecycle.parts), { timeout: target.settleMs }).toBe(true);
    await lifecycle.stop();
    expect(lifecycle.parts.map((part) => [part.event, part.data])).toEqual([
      ["metadata", { run_id: run.run_id, attempt: 1 }],
      ["metadata", { status: "run_done", run_id: run.run_id }],
    ]);

    const edits = follow((signal) =>
      sdk.threads.joinStream(tid, { lastEventId: "0", streamMode: "state_update", signal }),
    );
    await expect.poll(() => edits.parts.length, { timeout: target.settleMs }).toBe(1);
    await edits.stop();
    expect(edits.parts[0]).toMatchObject({ event: "state_update", data: { thread_id: tid } });
    const state = (edits.parts[0]!.data as { state: { values: unknown } }).state;
    expect(texts(state.values)).toEqual(["human:ping", "ai:pong", "ai:edited"]);
  });

  it("ends when the thread is deleted", async () => {
    const thread = await sdk.threads.create();
    const run = await sdk.runs.create(thread.thread_id, "agent", { input: human("ping") });
    await target.untilHeld(1);
    target.release();
    await sdk.runs.join(thread.thread_id, run.run_id);
    const parts: Part[] = [];
    const reading = (async () => {
      for await (const part of sdk.threads.joinStream(thread.thread_id, { lastEventId: "0" }))
        parts.push(part);
    })();
    await expect.poll(() => runDone(run.run_id)(parts), { timeout: target.settleMs }).toBe(true);
    await sdk.threads.delete(thread.thread_id);
    await reading; // the response ended
    expect(parts.length).toBeGreaterThan(0);
  });

  it("an unknown thread is 404; an unknown mode 422", async () => {
    await expect(
      collectFirst(sdk.threads.joinStream("00000000-0000-4000-8000-000000000009")),
    ).rejects.toMatchObject({
      status: 404,
    });
    const thread = await sdk.threads.create();
    const bad = sdk.threads.joinStream(thread.thread_id, { streamMode: "values" as never });
    await expect(collectFirst(bad)).rejects.toMatchObject({ status: 422 });
  });
});

async function collectFirst(stream: AsyncIterable<Part>): Promise<Part | undefined> {
  for await (const part of stream) return part;
  return undefined;
}
