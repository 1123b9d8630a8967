import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import type { Clock } from "../../src/clock.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { forceUnlock } from "../../src/lock/index.js";
import { api, container, writeDoc } from "../controller/support.js";
import { applyFlags, captureIo, startPlane } from "../cli/reconcile-helpers.js";

// [safety] `plumb unlock --force` run while the holder still runs (an operator who took a live
// apply or controller for a dead one). The forced holder stops at its next renewal at the latest;
// another writer must not start before that holder's lease ran out, or both send: counted on the
// control plane (revisions, and which change is live).

let cp: RunningControlPlane;
let root: string;
beforeEach(async () => {
  ({ cp, root } = await startPlane({ revisionSeconds: 0.05, runSeconds: 0 }));
});
afterEach(async () => {
  await cp.stop();
  await rm(root, { recursive: true, force: true });
});

const doc = (n: number) => container("alpha", `img/alpha:${n}`);
const revisions = async () => {
  const client = api(cp.url);
  return client.revisions((await client.deployment("alpha")).id);
};

/** A waiter's time: every sleep passes at once, and passes for the forced holder too (`passes`). */
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

const TOO_MANY = () =>
  new Response(JSON.stringify({ detail: "slow down" }), {
    status: 429,
    headers: { "content-type": "application/json", "retry-after": "0" },
  });

it("unlock --force of a live apply: the next apply waits out its lease, the forced one sends nothing more", async () => {
  await writeDoc(root, "a.yaml", doc(1));
  expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
  await writeDoc(root, "a.yaml", doc(2));

  let elapsed = 0; // time that passed for the first apply while the second one waited
  let forced = false;
  const second: { now?: number | string; waited?: number | string } = {};
  const forcing: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!forced && init?.method === "PATCH" && url.includes("/v2/deployments/")) {
      forced = true;
      // Its PATCH is answered 429 (retried at once, after the write-ahead): meanwhile someone runs
      // plumb unlock --force, and another apply of a newer change starts.
      await forceUnlock({ statusDir: join(root, ".plumb", "status") });
      await writeDoc(root, "a.yaml", doc(3));
      const code = (error: { code?: string }) => error.code ?? "failed";
      // Without waiting: refused, the forced holder's lease has not run out.
      second.now = await runApply(root, applyFlags(), captureIo(cp)).catch(code);
      // Waiting: takes the store once a whole lease passed (for the first apply too).
      const io = captureIo(cp, { lock: waiterTime((ms) => (elapsed += ms)) });
      second.waited = await runApply(root, applyFlags({ lockTimeout: 60_000 }), io).catch(code);
      return TOO_MANY();
    }
    return fetch(input, init);
  };
  const first = captureIo(cp, {
    fetch: forcing,
    lock: { leaseMs: 3_000, monotonic: () => performance.now() + elapsed },
  });
  const firstCode = await runApply(root, applyFlags(), first).catch((error: { code?: string }) => error.code);
  expect(forced).toBe(true);
  expect(second).toEqual({ now: "state-locked", waited: 0 });
  expect(firstCode === 1 || firstCode === "lock-lost").toBe(true);
  expect(`${first.out()}${first.err()}`).toContain("lock-lost");
  // v1 and the second apply's v3; never the forced apply's v2 after it.
  expect(await revisions()).toHaveLength(2);
  const live = await api(cp.url).deployment("alpha");
  expect(live.source_revision_config).toMatchObject({ image_uri: "img/alpha:3" });
}, 60_000);
