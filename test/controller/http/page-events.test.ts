import { describe, expect, it } from "vitest";
import { createPageEvents } from "../../../src/controller/http/page-events.js";
import { createRequestWindow } from "../../../src/controller/http/request-window.js";
import { manualTimers } from "../manual-timers.js";

const changedKeys = (texts: string[]) =>
  texts
    .filter((t) => t.startsWith("event: changed"))
    .map((t) => JSON.parse(t.split("data: ")[1]!) as { keys: string[]; more: number });

describe("status page live events", () => {
  it("gathers the keys changed within the delay into one event per subscriber", async () => {
    const timers = manualTimers();
    const events = createPageEvents(timers, 250);
    const a: string[] = [];
    const b: string[] = [];
    events.subscribe((t) => a.push(t));
    const stopB = events.subscribe((t) => b.push(t));
    expect(a[0]).toContain("event: hello");
    for (const key of ["Deployment/x", "Deployment/y", "Deployment/x"]) events.changed(key);
    await timers.advance(249);
    expect(changedKeys(a)).toEqual([]);
    await timers.advance(1);
    expect(changedKeys(a)).toEqual([{ keys: ["Deployment/x", "Deployment/y"], more: 0 }]);
    stopB();
    events.changed("Deployment/z");
    await timers.advance(250);
    expect(changedKeys(a)).toHaveLength(2);
    expect(changedKeys(b)).toHaveLength(1);
  });

  it("caps the keys of one event (a startup of thousands is a few small events) and says how many more", async () => {
    const timers = manualTimers();
    const events = createPageEvents(timers, 250);
    const seen: string[] = [];
    events.subscribe((t) => seen.push(t));
    for (let i = 0; i < 1_000; i++) events.changed(`Deployment/d${i}`);
    await timers.advance(250);
    const [event] = changedKeys(seen);
    expect(event?.keys).toHaveLength(100);
    expect(event?.more).toBe(900);
  });

  it("keeps nothing while no page is open, and sends keep-alive comments to open ones", async () => {
    const timers = manualTimers();
    const events = createPageEvents(timers, 250);
    for (let i = 0; i < 10; i++) events.changed(`Deployment/d${i}`);
    expect(timers.pending()).toBe(0);
    const seen: string[] = [];
    events.subscribe((t) => seen.push(t));
    await timers.advance(20_000);
    expect(seen).toContain(": keep-alive\n\n");
    expect(changedKeys(seen)).toEqual([]);
    events.close();
    expect(timers.pending()).toBe(0);
  });
});

describe("requests in the rate-limit window", () => {
  it("counts the requests of the last window only, in fixed memory", () => {
    const window = createRequestWindow(10_000);
    for (let i = 0; i < 5; i++) window.sent(1_000);
    window.sent(5_500);
    expect(window.count(5_999)).toBe(6);
    expect(window.count(10_999)).toBe(6); // 1.0 s is within 10 s of 10.999 s
    expect(window.count(11_500)).toBe(1); // second 1 has left the window
    expect(window.count(16_000)).toBe(0);
    window.sent(21_000); // reuses second 1's slot
    expect(window.count(21_000)).toBe(1);
  });
});
