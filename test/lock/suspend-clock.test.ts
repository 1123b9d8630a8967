import { describe, expect, it } from "vitest";
import { createFence } from "../../src/lock/fence.js";
import { readFileSync } from "node:fs";
import { bootMs, suspendAware, systemMonotonic } from "../../src/lock/lock-types.js";

// The lock's own clock (lock-types.ts): performance.now() stops while the machine is suspended, the
// time since boot does not. A holder whose machine slept through its lease must wake with its lease
// lapsed (its next write refused unless a renewal on the spot lands), never still good.

function sources() {
  const t = { hr: 5_000, boot: 900_000 as number | undefined };
  return {
    t,
    clock: suspendAware(
      () => t.hr,
      () => t.boot,
    ),
  };
}

describe("the lock's monotonic clock", () => {
  it("counts a suspend: the time since boot moved on while performance.now() did not", () => {
    const { t, clock } = sources();
    expect(clock()).toBe(5_000);
    t.hr += 10; // the machine slept a minute: 10 ms on performance.now()
    t.boot! += 60_000;
    expect(clock()).toBe(65_000);
    // A holder that renewed just before it slept wakes past its renew deadline.
    const fence = createFence({
      leaseMs: 30_000,
      monotonic: clock,
      since: 5_000,
      what: "the lock",
      onLapse: () => undefined,
    });
    expect(fence.valid()).toBe(false);
  });

  it("is performance.now() while awake, at its own resolution, and never goes back", () => {
    const { t, clock } = sources();
    t.hr += 3.25;
    t.boot! += 10; // /proc/uptime's 10 ms steps run ahead for a moment
    expect(clock()).toBe(5_010);
    t.hr += 4; // performance.now() catches up: no step back
    expect(clock()).toBe(5_010);
    t.hr += 20.5;
    t.boot! += 10;
    expect(clock()).toBe(5_027.75);
  });

  it("without a time since boot (no /proc), or when it cannot be read any more, is performance.now()", () => {
    const none = { hr: 7, boot: undefined as number | undefined };
    const clock = suspendAware(
      () => none.hr,
      () => none.boot,
    );
    none.hr = 42;
    expect(clock()).toBe(42);
    const { t, clock: later } = sources();
    t.boot = undefined;
    t.hr += 1;
    expect(later()).toBe(5_001);
  });

  it("the system's moves forward with performance.now() while awake", () => {
    const a = systemMonotonic();
    const hr = performance.now();
    const b = systemMonotonic();
    expect(b).toBeGreaterThanOrEqual(a);
    // Within /proc/uptime's resolution of performance.now() (nothing slept since it started).
    expect(Math.abs(b - hr)).toBeLessThan(1_000);
  });

  it.skipIf(process.platform !== "linux")("reads the time since boot in ms on Linux", () => {
    const uptime = Number.parseFloat(readFileSync("/proc/uptime", "utf8")) * 1000;
    expect(Math.abs(bootMs()! - uptime)).toBeLessThan(5_000);
  });
});
