import { describe, expect, it } from "vitest";
import { createThreadEvents } from "../../../../src/control-plane/agent-server/threads/thread-events.js";

// The thread streams' memory is bounded: events per thread and threads kept (docs/control-plane.md
// "Thread stream"); a thread someone is streaming is never dropped.

const event = (n: number) => ({ id: n, mode: "values" as const, event: "values", data: { n } });

describe("thread events", () => {
  it("keeps the last events of a thread, numbered on", () => {
    const hub = createThreadEvents(3, 10);
    for (let n = 1; n <= 5; n++) hub.fromRun("d", "t", "r", event(n));
    expect(hub.log("d", "t").events.map((e) => [e.id, e.data])).toEqual([
      [3, { n: 3 }],
      [4, { n: 4 }],
      [5, { n: 5 }],
    ]);
  });

  it("drops the least recently used thread, but not one being streamed", () => {
    const hub = createThreadEvents(10, 2);
    hub.fromRun("d", "streamed", "r", event(1));
    const unsubscribe = hub.subscribe("d", "streamed", () => undefined);
    hub.fromRun("d", "idle", "r", event(1));
    hub.fromRun("d", "newer", "r", event(1)); // over the limit: "idle" goes, "streamed" stays
    expect(hub.log("d", "streamed").events).toHaveLength(1);
    expect(hub.log("d", "idle").events).toHaveLength(0);
    unsubscribe();
  });

  it("a run's end is its run_done metadata; a dropped run leaves nothing", () => {
    const hub = createThreadEvents();
    hub.fromRun("d", "t", "kept", { id: 1, mode: "always", event: "end", data: null });
    hub.fromRun("d", "t", "refused", {
      id: 1,
      mode: "always",
      event: "metadata",
      data: { run_id: "refused" },
    });
    hub.dropRun("d", "t", "refused");
    expect(hub.log("d", "t").events.map((e) => [e.event, e.data])).toEqual([
      ["metadata", { status: "run_done", run_id: "kept" }],
    ]);
  });
});
