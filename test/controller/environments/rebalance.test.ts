import { describe, expect, it } from "vitest";
import type {
  EnvironmentClaim,
  EnvironmentRole,
} from "../../../src/controller/environments/environment-claim.js";
import { createRebalance } from "../../../src/controller/environments/rebalance.js";
import { shareOf } from "../../../src/controller/environments/replicas.js";

// The spread of environments over replicas: ceil(environments / live replicas) each at most; over
// it the newest is handed over, at it the waits stop, under it the waiting claims look again.

type Fake = EnvironmentClaim & { calls: string[]; set(role: EnvironmentRole, since?: number): void };

function claim(name: string, role: EnvironmentRole, since = 0): Fake {
  let current = role;
  let started = since;
  const calls: string[] = [];
  return {
    name,
    calls,
    set(next, at = started) {
      current = next;
      started = at;
    },
    role: () => current,
    leader: () => undefined,
    error: () => undefined,
    store: () => undefined,
    since: () => started,
    wake: () => void calls.push("wake"),
    stopWaiting: () => void calls.push("stop-waiting"),
    handOver: () => void calls.push("hand-over"),
    restart: () => void calls.push("restart"),
    stop: async () => undefined,
  };
}

describe("shareOf", () => {
  it("is ceil(environments / live replicas), never dividing by zero", () => {
    expect(shareOf(2, 1)).toBe(2);
    expect(shareOf(2, 2)).toBe(1);
    expect(shareOf(3, 2)).toBe(2);
    expect(shareOf(2, 3)).toBe(1);
    expect(shareOf(3, 0)).toBe(3);
  });
});

describe("createRebalance", () => {
  it("a replica alone takes every environment", () => {
    const claims = [claim("prod", "standby"), claim("staging", "leader")];
    const rebalance = createRebalance(
      () => 2,
      () => claims,
      () => 1,
    );
    expect(rebalance.mayTake()).toBe(true);
    rebalance.run();
    expect(claims[0]!.calls).toEqual(["wake"]);
  });

  it("over its share it hands over the environment it took last, one at a time", () => {
    const claims = [claim("prod", "leader", 10), claim("staging", "leader", 20), claim("qa", "leader", 5)];
    const rebalance = createRebalance(
      () => 3,
      () => claims,
      () => 3,
    );
    expect(rebalance.share()).toBe(1);
    rebalance.run();
    expect(claims.map((c) => c.calls)).toEqual([[], ["hand-over"], []]);
  });

  it("at its share it stops waiting for more; the shares add up to every environment", () => {
    const claims = [claim("prod", "standby"), claim("staging", "leader")];
    const rebalance = createRebalance(
      () => 2,
      () => claims,
      () => 2,
    );
    expect(rebalance.mayTake()).toBe(false);
    rebalance.run();
    expect(claims[0]!.calls).toEqual(["stop-waiting"]);
    // The other replica dies: the share grows and the standby looks again.
    const alone = createRebalance(
      () => 2,
      () => claims,
      () => 1,
    );
    expect(alone.mayTake()).toBe(true);
    alone.run();
    expect(claims[0]!.calls).toEqual(["stop-waiting", "wake"]);
  });

  it("shares the environments git defines now: one added grows the share", () => {
    const claims = [claim("prod", "leader"), claim("staging", "standby")];
    let defined = 2;
    const rebalance = createRebalance(
      () => defined,
      () => claims,
      () => 2,
    );
    expect(rebalance.mayTake()).toBe(false);
    defined = 3;
    expect(rebalance.share()).toBe(2);
    expect(rebalance.mayTake()).toBe(true);
  });

  it("counts an environment still starting as taken", () => {
    const claims = [claim("prod", "starting"), claim("staging", "standby")];
    expect(
      createRebalance(
        () => 2,
        () => claims,
        () => 2,
      ).mayTake(),
    ).toBe(false);
  });
});
