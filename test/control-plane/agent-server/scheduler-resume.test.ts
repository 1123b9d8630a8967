import { describe, expect, it } from "vitest";
import { createScheduler } from "../../../src/control-plane/agent-server/runs/scheduler.js";
import type { ThreadRecord } from "../../../src/control-plane/agent-server/types.js";
import { manualClock } from "./test-context.js";

describe("scheduler.resume", () => {
  it("drops a restarted run's partial output from the messages and the history", () => {
    const clock = manualClock();
    const scheduler = createScheduler({ clock, runSeconds: 5, onChange: () => undefined });
    const at = new Date(clock.now()).toISOString();
    const input = { type: "human" as const, content: "ping", id: "m1" };
    const thread: ThreadRecord = {
      thread_id: "t1",
      created_at: at,
      updated_at: at,
      state_updated_at: at,
      metadata: {},
      checkpoint_id: "c1",
      messages: [{ run_id: "r1", message: input }],
      history: [{ checkpoint_id: "c1", created_at: at, run_id: "r1", values: { messages: [input] } }],
      runs: [
        {
          run_id: "r1",
          thread_id: "t1",
          assistant_id: "a",
          status: "running",
          multitask_strategy: "enqueue",
          created_at: at,
          updated_at: at,
          metadata: {},
          input_messages: [input],
        },
      ],
    };
    scheduler.resume([thread]);
    // Started again from its input: one copy of the input in the state, and its checkpoints once
    // (the input, then the input in the state with the node due).
    expect(thread.messages.map((m) => m.message.id)).toEqual(["m1"]);
    expect(thread.history?.map((c) => [c.run_id, c.source, c.step])).toEqual([
      ["r1", "input", -1],
      ["r1", "loop", 0],
    ]);
    expect(thread.history?.map((c) => c.checkpoint_id)).not.toContain("c1");
    expect(thread.history?.[1]?.values.messages.map((m) => m.id)).toEqual(["m1"]);
    scheduler.shutdown();
  });
});
