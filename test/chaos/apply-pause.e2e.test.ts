import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import type { Clock } from "../../src/clock.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api, container, writeDoc } from "../controller/support.js";
import { applyFlags, captureIo, startPlane } from "../cli/reconcile-helpers.js";

// issue 23 [safety], `apply` paused in the middle of its work (as by SIGSTOP): its own monotonic
// clock jumps past the lease at a chosen point; meanwhile a second apply (whose waiting time passes
// at once) sees the lock unrenewed for a lease, takes it over and applies a newer change. When the
// first resumes it sends nothing more, writes no record and stops with lock-lost: counted on the
// control plane (revisions) and in the status store (the record is the second apply's).

let cp: RunningControlPlane;
let root: string;
beforeEach(async () => {
  ({ cp, root } = await startPlane({ revisionSeconds: 0.05, runSeconds: 0 }));
});
afterEach(async () => {
  await cp.stop();
  await rm(root, { recursive: true, force: true });
});

const VERIFY = { assistant_id: "agent", input: { messages: [{ role: "user", content: "ping" }] } };
const doc = (n: number) => container("alpha", `img/alpha:${n}`, { verify: VERIFY });
const revisions = async () => {
  const client = api(cp.url);
  return client.revisions((await client.deployment("alpha")).id);
};
const record = async () =>
  JSON.parse(await readFile(join(root, ".plumb", "status", "deployment.alpha.json"), "utf8")) as {
    applied_spec?: unknown;
    sync?: string;
  };

/**
 * A waiting process's time: every sleep passes at once (it has watched the lease for that long), and
 * passes for the paused apply too (`passes`): both see the same time go by, as two real processes do.
 */
function waiterTime(passes: (ms: number) => void) {
  let now = 0;
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      passes(ms);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return { clock, monotonic: () => now, retryMs: 250 };
}

type Point = { name: string; at: (method: string, url: string) => boolean; answer?: () => Response };
const POINTS: Point[] = [
  {
    name: "while waiting for its revision",
    at: (method, url) => method === "GET" && /\/revisions\/[^/?]+$/.test(url),
  },
  {
    name: "between retries (a 429 after the write-ahead)",
    at: (method, url) => method === "PATCH" && url.includes("/v2/deployments/"),
    answer: () =>
      new Response(JSON.stringify({ detail: "slow down" }), {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "0" },
      }),
  },
  // Its first call to the agent server (its thread of the last check); the run would come next.
  { name: "during verify", at: (_method, url) => url.includes("/agents/") },
];

for (const point of POINTS)
  it(`an apply paused ${point.name} sends and records nothing once another took the lock`, async () => {
    await writeDoc(root, "a.yaml", doc(1));
    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    await writeDoc(root, "a.yaml", doc(2));

    let skew = 0; // the paused apply's monotonic clock: jumps when it is "stopped"
    let paused = false;
    let second: number | undefined;
    const pausing: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!paused && point.at(init?.method ?? "GET", url)) {
        paused = true;
        skew += 10_000; // stopped for 10 s, past the 6 s lease
        // Meanwhile another apply takes the lock over and applies a newer change.
        await writeDoc(root, "a.yaml", doc(3));
        const io = captureIo(cp, { lock: waiterTime((ms) => (skew += ms)) });
        second = await runApply(root, applyFlags({ lockTimeout: 60_000 }), io);
        if (point.answer) return point.answer();
      }
      return fetch(input, init);
    };
    const paused1 = captureIo(cp, {
      fetch: pausing,
      // Before the pause its lease runs in real time: 6 s (a renewal every 2 s, a lapse after 4 s
      // without one) leaves a loaded worker 2 s of lag, where 3 s left it 1 s, and costs nothing
      // (the pause and the waiter's watch are virtual).
      lock: { leaseMs: 6_000, monotonic: () => performance.now() + skew },
    });
    const first = await runApply(root, applyFlags(), paused1).catch((error: { code?: string }) => error.code);
    expect(paused).toBe(true);
    expect(second).toBe(0);
    expect(first === 1 || first === "lock-lost").toBe(true);
    expect(`${paused1.out()}${paused1.err()}`).toContain("lock-lost");
    // the store is fine: another run holds its lock (the advice said to fix the status directory)
    expect(`${paused1.out()}${paused1.err()}`).not.toContain("fix the status directory");

    const revs = await revisions();
    // v1, the paused apply's v2 if it had sent it before the pause, and the second apply's v3.
    const sentBeforePause = point.name.startsWith("between") ? 0 : 1;
    expect(revs).toHaveLength(2 + sentBeforePause);
    const live = await api(cp.url).deployment("alpha");
    expect(live.source_revision_config).toMatchObject({ image_uri: "img/alpha:3" });
    expect(await record()).toMatchObject({
      applied_spec: { source_revision_config: { image_uri: "img/alpha:3" } },
      sync: "Synced",
    });
  }, 60_000);
