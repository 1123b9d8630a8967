import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneClient } from "../../../src/api/control-plane-client.js";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { createLiveListing } from "../../../src/controller/sweeps/live-listing.js";
import { startupSweep } from "../../../src/controller/sweeps/startup-sweep.js";
import type { Deployment } from "../../../src/schema/deployment.js";
import { loaded, snapshotOf, status } from "../fixtures.js";
import { manualTimers } from "../manual-timers.js";
import { api, memoryLogger } from "../support.js";

// The startup sweep against the real local control plane's paged listing: a restart over many live
// deployments holds a few pages of them at a time, never the whole listing (docs/controller.md
// "Speed and memory": read whole, it was the restart's memory peak).

const LIVE = 200;
const PAGE = 20;
const MAX_HELD = 30;
const name = (i: number) => `agent-${String(i).padStart(3, "0")}`;

let cp: RunningControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1e9, intervalSeconds: 10 } },
  });
  const { call } = api(cp.url);
  for (let i = 0; i < LIVE; i += 20)
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        call("POST", "/v2/deployments", {
          name: name(i + j),
          source: "internal_container",
          source_config: {},
          secrets: [],
          source_revision_config: { image_uri: `img/${name(i + j)}:1` },
        }),
      ),
    );
}, 60_000);

afterAll(() => cp.stop());

/** 200 live objects with secrets (the first 3 recorded with fingerprints) and 5 not live yet. */
function restartOver() {
  const manifests = Array.from({ length: LIVE + 5 }, (_, i) => {
    const m = loaded(`${name(i)}.yaml`, name(i));
    (m.manifest.spec as { secrets?: unknown[] }).secrets = [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }];
    return m;
  });
  const statuses = new Map(
    [0, 1, 2].map((i) => [
      `Deployment/${name(i)}`,
      status(name(i), { secret_fingerprints: { values: { TOKEN: "f" }, salt: "s" } }),
    ]),
  );
  return { snapshot: snapshotOf(manifests), statuses };
}

describe("the startup sweep", () => {
  it("queues every object against one listing read page by page, holding a few pages at most", async () => {
    const { snapshot, statuses } = restartOver();
    const client = createControlPlaneClient({ apiUrl: cp.url, apiKey: DEFAULT_API_KEY, pageSize: PAGE });
    const log = memoryLogger();
    const listing = createLiveListing(() => client.deploymentPages(), log.logger, manualTimers(), {
      maxHeld: MAX_HELD,
      stallMs: 60_000,
    });
    // The queue: a worker takes one queued object's entry per turn of the event loop, as reconciles start.
    const queued: string[] = [];
    const taken = new Map<string, Deployment | null | undefined>();
    let mostHeld = 0;
    let next = 0;
    let sweeping = true;
    const worker = (async () => {
      for (let turns = 0; turns < 100_000 && (sweeping || next < queued.length); turns++) {
        await new Promise((resolve) => setImmediate(resolve));
        const key = queued[next];
        if (key === undefined) continue;
        next++;
        taken.set(key, listing.take(key));
      }
    })();
    await startupSweep({
      snapshot: () => snapshot,
      statuses,
      listing,
      enqueue: (key) => {
        queued.push(key);
        mostHeld = Math.max(mostHeld, listing.held());
      },
      stopping: () => false,
      log: log.logger,
    });
    sweeping = false;
    await worker;

    expect(new Set(queued).size).toBe(LIVE + 5);
    expect(mostHeld).toBeGreaterThan(0);
    expect(mostHeld).toBeLessThanOrEqual(MAX_HELD + PAGE); // read whole, it held all 200
    for (let i = 0; i < LIVE; i++)
      expect(taken.get(`Deployment/${name(i)}`)).toMatchObject({ name: name(i) });
    for (let i = LIVE; i < LIVE + 5; i++) expect(taken.get(`Deployment/${name(i)}`)).toBeNull(); // not live: created
    expect(listing.held()).toBe(0);
    // Warned once, from the names alone: the live ones without recorded fingerprints.
    const warnings = log.lines().filter((l) => String(l.msg).startsWith("no recorded secret fingerprints"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ deployments: LIVE - 3, level: 40 });
    expect((warnings[0] as { names: string[] }).names[0]).toBe(name(3));
  }, 60_000);
});
