import { describe, expect, it } from "vitest";
import { createDriftSweep, findRemovedFromGit } from "../../../src/controller/sweeps/drift-sweep.js";
import { createLiveListing } from "../../../src/controller/sweeps/live-listing.js";
import type { Deployment } from "../../../src/schema/deployment.js";
import { loaded, problem, snapshotOf, status } from "../fixtures.js";
import { manualTimers } from "../manual-timers.js";
import { memoryLogger } from "../support.js";

const live = (...names: string[]) => new Map(names.map((n) => [n, { name: n } as Deployment]));

describe("findRemovedFromGit", () => {
  const statuses = new Map([
    ["Deployment/alpha", status("alpha")],
    ["Deployment/beta", status("beta")],
    ["Deployment/gone", status("gone")],
    ["OrganizationAccess/org", status("org", { kind: "OrganizationAccess" })],
  ]);

  it("lists managed deployments still live but no longer in git", () => {
    const snapshot = snapshotOf([loaded("a.yaml", "alpha")]);
    const found = findRemovedFromGit(snapshot, statuses, live("alpha", "beta", "org", "unmanaged"));
    // gone is not live any more; org is not a Deployment; unmanaged has no record
    expect(found.map((s) => s.name)).toEqual(["beta"]);
  });

  it("reports nothing while a manifest is invalid (the object may be in the broken file)", () => {
    const snapshot = snapshotOf([loaded("a.yaml", "alpha")], [problem("b.yaml", 1, "bad")]);
    expect(findRemovedFromGit(snapshot, statuses, live("alpha", "beta"))).toEqual([]);
  });
});

describe("a drift sweep", () => {
  const snapshot = snapshotOf([
    loaded("a.yaml", "alpha"),
    loaded("b.yaml", "beta"),
    loaded("c.yaml", "gamma"),
  ]);
  const statuses = new Map([["Deployment/gone", status("gone")]]);

  /** A sweep over `pages` of live deployments (or a listing that fails), with what it queued and reported. */
  function sweepOver(pages: () => AsyncIterable<Deployment[]>) {
    const log = memoryLogger();
    const listing = createLiveListing(pages, log.logger, manualTimers(), { maxHeld: 1, stallMs: 1_000 });
    const queued: string[] = [];
    const drift: string[] = [];
    let synced = 0;
    const sweep = createDriftSweep({
      snapshot: () => snapshot,
      statuses,
      listing,
      // The queue takes each object at once, as a worker starting would: the listing reads on.
      enqueue: (key) => {
        queued.push(key);
        taken.set(key, listing.take(key));
      },
      metrics: { driftDetected: (kind, reason) => void drift.push(`${kind} ${reason}`) },
      log: log.logger,
      active: () => true,
      synced: () => void synced++,
    });
    const taken = new Map<string, Deployment | null | undefined>();
    return { sweep, queued, taken, drift, synced: () => synced, log };
  }

  it("queues live objects with their listed state, the rest as not live, and reports what left git", async () => {
    const s = sweepOver(async function* () {
      yield [{ name: "beta", id: "b" } as Deployment, { name: "gone", id: "g" } as Deployment];
      yield [{ name: "alpha", id: "a" } as Deployment];
    });
    await s.sweep();
    expect(s.queued).toEqual(["Deployment/beta", "Deployment/alpha", "Deployment/gamma"]);
    expect(s.taken.get("Deployment/beta")).toMatchObject({ id: "b" });
    expect(s.taken.get("Deployment/alpha")).toMatchObject({ id: "a" });
    expect(s.taken.get("Deployment/gamma")).toBeNull(); // listed completely, and not there
    expect(s.drift).toEqual(["Deployment removed-from-git"]);
    expect(s.synced()).toBe(1);
  });

  it("looks every object not yet handed over up when the listing fails half-way, and reports nothing", async () => {
    const s = sweepOver(async function* () {
      yield [{ name: "beta", id: "b" } as Deployment];
      throw new Error("503 from the control plane");
    });
    await s.sweep();
    expect(s.queued).toEqual(["Deployment/beta", "Deployment/alpha", "Deployment/gamma"]);
    expect(s.taken.get("Deployment/beta")).toMatchObject({ id: "b" });
    expect(s.taken.get("Deployment/alpha")).toBeUndefined(); // looked up, not taken for "not live"
    expect(s.taken.get("Deployment/gamma")).toBeUndefined();
    expect(s.drift).toEqual([]);
    expect(s.synced()).toBe(0);
  });
});
