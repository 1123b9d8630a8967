import { afterEach, describe, expect, it } from "vitest";
import { type Env, FastClock, containerDoc, startEnv, writeManifests } from "../reconcile/harness.js";

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const N = 200;
// The apply's timeout is virtual: FastClock adds up every sleep of every request in flight (they
// overlap in real time), 429/503's Retry-After of 1 s included, so an apply here spends 20-35 s of
// it, and the order of the requests (the machine's load) moves that. Ten minutes of it is never
// near; a real hang still ends at the test's own 60 s.
const APPLY = { concurrency: 32, timeoutMs: 600_000 };
const docs = (tag: string) =>
  Array.from({ length: N }, (_, i) => containerDoc(`svc-${i}`, `registry.example/svc-${i}:${tag}`));

describe("apply under faults", () => {
  it("converges 200 deployments at 20% faults with no duplicate and exactly one new revision each", async () => {
    env = await startEnv(
      {
        faults: {
          rates: [
            { kind: "500", share: 0.04 },
            { kind: "503", share: 0.04 },
            { kind: "429", share: 0.04 },
            { kind: "reset", share: 0.04 },
            { kind: "lost-response", share: 0.04 },
          ],
        },
        faultSeed: 7,
      },
      // Retry-After and backoff waits pass in virtual time (shared with the control plane).
      new FastClock(),
      process.env,
      // A read that fails MAX_ATTEMPTS times in a row fails its deployment (the lookup after an
      // ambiguous create, the read after an ambiguous PATCH): at 20% faults 6 attempts do so once
      // in 16,000 reads, and a run makes about 70 such reads, so the default 6 failed ~1 run in 200.
      // 12 attempts: once in 240 million reads. (What this test is about is no duplicate, not the budget.)
      { maxAttempts: 12 },
    );
    await writeManifests(env.root, docs("1"));
    const created = await env.apply(APPLY);
    // The results that did not converge, not only their count: a failure says what happened.
    expect(created.results.filter((r) => r.outcome !== "converged")).toEqual([]);
    expect(created.summary.converged).toBe(N);

    await writeManifests(env.root, docs("2"));
    const changed = await env.apply(APPLY);
    expect(changed.results.every((r) => r.action === "update")).toBe(true);
    expect(changed.summary.converged).toBe(N);
    expect(changed.results.filter((r) => r.outcome !== "converged")).toEqual([]);

    const all = await env.ports.controlPlane.listDeployments();
    expect(all).toHaveLength(N);
    expect(new Set(all.map((d) => d.name)).size).toBe(N);
    // Exactly two revisions each: the first (create) and one for the change.
    const counts = await Promise.all(
      all.map(
        async (d) => (await env!.ports.controlPlane.listRevisions(d.id, { limit: 100 })).resources.length,
      ),
    );
    expect(counts.filter((c) => c !== 2)).toEqual([]);
    for (const d of all) expect(d.active_revision_id).toBe(d.latest_revision_id);
  }, 60_000);
});
