import { describe, expect, it } from "vitest";
import { coalesce } from "../../../src/controller/queue/coalesce.js";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("coalesce", () => {
  it("runs once more after a burst of calls during a run, and callers share one promise", async () => {
    const runs: string[] = [];
    const gates = [gate(), gate()];
    const c = coalesce(async (arg: string) => {
      runs.push(arg);
      await gates[runs.length - 1]?.opened; // runs after these two finish at once
    });
    const first = c.run("watch");
    const second = c.run("poll");
    const third = c.run("webhook");
    expect(second).toBe(first);
    expect(third).toBe(first);
    gates[0]!.open();
    await Promise.resolve();
    gates[1]!.open();
    await first;
    expect(runs).toEqual(["watch", "watch"]); // the first trigger labels the whole burst
    await c.run("later").then(() => expect(runs).toHaveLength(3));
  });

  it("skips the extra run when no longer allowed (stopping), and settled waits for the run", async () => {
    let runs = 0;
    let allowed = true;
    const g = gate();
    const c = coalesce(
      async () => {
        runs++;
        await g.opened;
      },
      () => allowed,
    );
    await c.settled(); // idle: resolves at once
    void c.run(undefined);
    void c.run(undefined);
    allowed = false;
    let settled = false;
    const done = c.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    g.open();
    await done;
    expect(runs).toBe(1);
  });
});
