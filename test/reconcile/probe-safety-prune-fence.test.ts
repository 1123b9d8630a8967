import { expect, it } from "vitest";
import { applyPrune } from "../../src/reconcile/prune/prune.js";

// A deletion is counted in the prune ledger before its DELETE is sent (a kill in between must not
// leave it out of the budget). An apply whose lock was taken away (paused past its lease, forced)
// must count nothing either: the ledger belongs to the store's holder now. The fence is checked first.

it("a writer that lost its lock neither counts nor sends a deletion", async () => {
  const calls: string[] = [];
  const port = {
    deleteDeployment: async () => (calls.push("DELETE"), true),
    getDeployment: async () => null,
  };
  const results = await applyPrune(port, [{ kind: "Deployment", name: "a", id: "id-a", action: "delete" }], {
    clock: { now: () => 0, sleep: async () => undefined },
    timeoutMs: 1_000,
    pollIntervalMs: 10,
    forget: async () => void calls.push("forget"),
    counted: async () => void calls.push("counted"),
    fence: () => {
      throw new Error("lock-lost");
    },
  });
  expect(calls).toEqual([]);
  expect(results).toMatchObject([{ name: "a", outcome: "failed", message: "lock-lost" }]);
});

it("a holder counts each deletion before it is sent", async () => {
  const calls: string[] = [];
  const port = {
    deleteDeployment: async () => (calls.push("DELETE"), true),
    getDeployment: async () => null,
  };
  await applyPrune(port, [{ kind: "Deployment", name: "a", id: "id-a", action: "delete" }], {
    clock: { now: () => 0, sleep: async () => undefined },
    timeoutMs: 1_000,
    pollIntervalMs: 10,
    forget: async () => void calls.push("forget"),
    counted: async () => void calls.push("counted"),
    fence: () => undefined,
  });
  expect(calls).toEqual(["counted", "DELETE", "forget"]);
});
