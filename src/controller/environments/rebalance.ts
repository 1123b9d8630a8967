import type { EnvironmentClaim } from "./environment-claim.js";
import { shareOf } from "./replicas.js";

// The environments spread over the live replicas without a fixed shard count (Argo CD's controller
// sharding, by lock): a replica takes a free environment only while it leads fewer than its share,
// ceil(environments / live replicas); over its share it hands its newest environment over (one at a
// time), at its share it stops waiting for more. The shares of all replicas add up to at least the
// number of environments, so every environment finds a leader and none moves back and forth.

export type Rebalance = {
  /** Whether this replica may take one more environment now. */
  mayTake: () => boolean;
  /** Look at the share again: hand over, stop waiting or wake the waiting claims. */
  run(): void;
  share: () => number;
};

export function createRebalance(
  /** How many environments the replicas share (those git defines now). */
  environments: () => number,
  claims: () => readonly EnvironmentClaim[],
  live: () => number,
): Rebalance {
  const held = () => claims().filter((c) => c.role() === "leader" || c.role() === "starting");
  const share = () => shareOf(environments(), live());
  return {
    share,
    mayTake: () => held().length < share(),
    run() {
      const leading = held();
      const limit = share();
      if (leading.length > limit) {
        const newest = leading.filter((c) => c.role() === "leader").sort((a, b) => b.since() - a.since())[0];
        newest?.handOver();
      }
      for (const claim of claims())
        if (claim.role() !== "leader" && claim.role() !== "starting") {
          if (leading.length >= limit) claim.stopWaiting();
          else claim.wake();
        }
    },
  };
}
