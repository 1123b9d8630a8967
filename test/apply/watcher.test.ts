import { describe, expect, it } from "vitest";
import type { Deployment } from "../../src/schema/deployment.js";
import type { Revision, RevisionStatus } from "../../src/schema/revision.js";
import type { DeploymentsPort } from "../../src/apply/ports.js";
import { createRevisionWatcher } from "../../src/apply/revision-watcher.js";
import { checkAnswer } from "../../src/apply/verify/verify.js";
import { FastClock } from "../reconcile/harness.js";

// A scripted control plane (the external boundary): revision i is DEPLOYED after `readyAt[i]` ms,
// except the ones listed as failing. Counts the calls so the polling budget can be checked.
function scripted(count: number, clock: FastClock, failing: Set<number>) {
  const calls = { list: 0, revision: 0, deployment: 0 };
  const start = clock.now();
  const readyAt = (i: number) => 2_000 + i * 100;
  const status = (i: number): RevisionStatus =>
    clock.now() - start < readyAt(i) ? "BUILDING" : failing.has(i) ? "BUILD_FAILED" : "DEPLOYED";
  const deployment = (i: number) =>
    ({
      id: `d${i}`,
      name: `n${i}`,
      latest_revision_id: `r${i}`,
      active_revision_id: status(i) === "DEPLOYED" ? `r${i}` : "old",
    }) as Deployment;
  const port: DeploymentsPort = {
    listDeployments: async () => {
      calls.list += 1;
      return Array.from({ length: count }, (_, i) => deployment(i));
    },
    getDeployment: async (id) => {
      calls.deployment += 1;
      return deployment(Number(id.slice(1)));
    },
    getRevision: async (id) => {
      calls.revision += 1;
      const i = Number(id.slice(1));
      return { id: `r${i}`, status: status(i), status_message: failing.has(i) ? "boom" : null } as Revision;
    },
    findDeploymentByName: async () => null,
    createDeployment: async () => {
      throw new Error("not used");
    },
    patchDeploymentOnce: async () => {
      throw new Error("not used");
    },
  };
  return { port, calls };
}

describe("revision watcher", () => {
  it("resolves many revisions mostly from listings, reads few revisions, and reports failures", async () => {
    const clock = new FastClock();
    const { port, calls } = scripted(50, clock, new Set([7]));
    const watcher = createRevisionWatcher(port, {
      clock,
      random: () => 0.5,
      deadline: clock.now() + 600_000,
      pollIntervalMs: 1_000,
      maxPollIntervalMs: 15_000,
    });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => watcher.wait(`d${i}`, `r${i}`)));
    expect(results.filter((r) => r.status === "DEPLOYED")).toHaveLength(49);
    expect(results[7]).toMatchObject({ status: "BUILD_FAILED", statusMessage: "boom" });
    // ~7 s of simulated building: a handful of listings and far fewer reads than one per revision per round.
    expect(calls.list).toBeLessThan(15);
    expect(calls.revision).toBeLessThan(150);
  });

  it("ends every wait with TIMEOUT at the deadline", async () => {
    const clock = new FastClock();
    const { port } = scripted(2, clock, new Set());
    const watcher = createRevisionWatcher(port, {
      clock,
      random: () => 0.5,
      deadline: clock.now() + 500,
      pollIntervalMs: 100,
      maxPollIntervalMs: 100,
    });
    const results = await Promise.all([watcher.wait("d0", "r0"), watcher.wait("d1", "r1")]);
    expect(results.map((r) => r.status)).toEqual(["TIMEOUT", "TIMEOUT"]);
  });
});

describe("verify answer check", () => {
  const human = { type: "human", content: "ping" };
  it("wants an ai message after the last human one, containing the expected text", () => {
    expect(checkAnswer([human, { type: "ai", content: "pong" }], "pong")).toBeNull();
    expect(
      checkAnswer(
        [
          human,
          {
            type: "ai",
            content: [
              { type: "text", text: "po" },
              { type: "text", text: "ng" },
            ],
          },
        ],
        "pong",
      ),
    ).toBeNull();
    expect(checkAnswer([{ type: "ai", content: "pong" }, human], "pong")).toBe("no ai message answered");
    expect(checkAnswer([human, { type: "ai", content: "pang" }], "pong")).toContain("does not contain");
    expect(checkAnswer([human, { type: "ai", content: "anything" }], undefined)).toBeNull();
  });
});
