import { describe, expect, it } from "vitest";
import { createLiveListing } from "../../../src/controller/sweeps/live-listing.js";
import type { Deployment } from "../../../src/schema/deployment.js";
import { manualTimers } from "../manual-timers.js";
import { memoryLogger } from "../support.js";

/** The listing's source: the pages of a list, as the client yields them. */
const pagesOf = (...pages: Deployment[][]) =>
  async function* () {
    yield* pages;
  };

const allKeys = (name: string) => `Deployment/${name}`;

describe("live listing", () => {
  it("gives each marked object the listed deployment once, null when not live, undefined otherwise", async () => {
    const log = memoryLogger();
    const listing = createLiveListing(pagesOf([{ name: "alpha", id: "1" } as Deployment]), log.logger);
    expect([...((await listing.stream(allKeys, () => undefined)) ?? [])]).toEqual(["alpha"]);
    listing.use("Deployment/beta");
    listing.use("Deployment/gamma");
    listing.forget("Deployment/gamma"); // its manifest changed since: look it up
    expect(listing.take("Deployment/alpha")).toMatchObject({ id: "1" });
    expect(listing.take("Deployment/alpha")).toBeUndefined();
    expect(listing.take("Deployment/beta")).toBeNull();
    expect(listing.take("Deployment/gamma")).toBeUndefined();
  });

  it("lets go of each listed deployment once its object has taken it", async () => {
    const listing = createLiveListing(
      pagesOf([{ name: "alpha" } as Deployment], [{ name: "beta" } as Deployment]),
      memoryLogger().logger,
    );
    await listing.stream(allKeys, () => undefined);
    expect(listing.held()).toBe(2);
    expect(listing.take("Deployment/alpha")).toMatchObject({ name: "alpha" });
    expect(listing.held()).toBe(1);
    expect(listing.take("Deployment/beta")).toMatchObject({ name: "beta" });
    expect(listing.held()).toBe(0);
  });

  it("hands out copies: a reconcile changing what it took does not change the listing", async () => {
    const listing = createLiveListing(
      pagesOf([{ name: "alpha", id: "1" } as Deployment]),
      memoryLogger().logger,
    );
    await listing.stream(allKeys, () => undefined);
    const first = listing.take("Deployment/alpha")!;
    first.id = "changed";
    await listing.stream(allKeys, () => undefined);
    expect(listing.take("Deployment/alpha")).toEqual({ name: "alpha", id: "1" });
  });
});

/** Pages of deployments d0, d1, ... of the given sizes. */
function pagesOfSizes(...sizes: number[]) {
  return async function* () {
    let n = 0;
    for (const size of sizes) yield Array.from({ length: size }, () => ({ name: `d${n++}` }) as Deployment);
  };
}
const keyOf = (name: string) => `Deployment/${name}`;
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
const limits = { maxHeld: 2, stallMs: 1_000 };

describe("a drift sweep's streamed listing", () => {
  it("hands each object over as its page arrives and takes in more only once the queue has taken enough", async () => {
    const listing = createLiveListing(pagesOfSizes(2, 2, 2), memoryLogger().logger, manualTimers(), limits);
    const queued: string[] = [];
    const done = listing.stream(keyOf, (key) => queued.push(key));
    await settle();
    // Four held (two over maxHeld): the third page waits for the queue.
    expect(queued).toEqual(["d0", "d1", "d2", "d3"].map(keyOf));
    expect(listing.take(keyOf("d0"))).toMatchObject({ name: "d0" });
    await settle();
    expect(queued).toHaveLength(4); // three held: still over
    expect(listing.take(keyOf("d1"))).toMatchObject({ name: "d1" });
    expect([...((await done) ?? [])]).toEqual(["d0", "d1", "d2", "d3", "d4", "d5"]);
    expect(queued).toHaveLength(6);
    for (const name of ["d2", "d3", "d4", "d5"]) expect(listing.take(keyOf(name))).toMatchObject({ name });
  });

  it("holds only the objects it is asked about; the others count as live", async () => {
    const listing = createLiveListing(pagesOfSizes(3, 3), memoryLogger().logger, manualTimers(), {
      maxHeld: 0,
      stallMs: 1_000,
    });
    const queued: string[] = [];
    const live = await listing.stream(
      (name) => (name === "d1" || name === "d4" ? keyOf(name) : undefined),
      (key) => {
        queued.push(key);
        if (key === keyOf("d1")) expect(listing.take(key)).toMatchObject({ name: "d1" });
      },
    );
    expect(queued).toEqual([keyOf("d1"), keyOf("d4")]); // d1 taken: the second page read without waiting
    expect([...(live ?? [])]).toEqual(["d0", "d1", "d2", "d3", "d4", "d5"]);
    listing.use(keyOf("d0")); // not handed over: as for an object that is not live
    expect(listing.take(keyOf("d0"))).toBeNull();
  });

  it("lets the entries go when the queue takes nothing for a while: those objects look themselves up", async () => {
    const timers = manualTimers();
    const listing = createLiveListing(pagesOfSizes(3, 1), memoryLogger().logger, timers, limits);
    const queued: string[] = [];
    const done = listing.stream(keyOf, (key) => queued.push(key));
    await settle();
    expect(queued).toHaveLength(3);
    await timers.advance(999);
    expect(queued).toHaveLength(3);
    await timers.advance(1);
    expect(await done).toBeDefined();
    expect(queued).toHaveLength(4);
    expect(listing.take(keyOf("d0"))).toBeUndefined(); // let go: looked up
    expect(listing.take(keyOf("d3"))).toMatchObject({ name: "d3" }); // listed after
  });

  it("takes in more when an object is forgotten (its manifest changed or left git)", async () => {
    const listing = createLiveListing(pagesOfSizes(3, 1), memoryLogger().logger, manualTimers(), limits);
    const queued: string[] = [];
    const done = listing.stream(keyOf, (key) => queued.push(key));
    await settle();
    expect(queued).toHaveLength(3);
    listing.forget(keyOf("d0"));
    expect(await done).toBeDefined();
    expect(queued).toHaveLength(4);
    expect(listing.take(keyOf("d0"))).toBeUndefined();
    expect(listing.take(keyOf("d1"))).toMatchObject({ name: "d1" });
  });

  it("ends without a result when closed while waiting, and when the API fails half-way (logged)", async () => {
    const closed = createLiveListing(pagesOfSizes(3, 3), memoryLogger().logger, manualTimers(), limits);
    const queued: string[] = [];
    const waiting = closed.stream(keyOf, (key) => queued.push(key));
    await settle();
    closed.close();
    expect(await waiting).toBeUndefined();
    expect(queued).toHaveLength(3);

    const log = memoryLogger();
    const failing = createLiveListing(
      async function* () {
        yield [{ name: "d0" } as Deployment];
        throw new Error("503 from the control plane");
      },
      log.logger,
      manualTimers(),
    );
    const handed: string[] = [];
    expect(await failing.stream(keyOf, (key) => handed.push(key))).toBeUndefined();
    expect(handed).toEqual([keyOf("d0")]);
    expect(failing.take(keyOf("d0"))).toMatchObject({ name: "d0" }); // handed over before the failure
    expect(log.lines().at(-1)).toMatchObject({ level: 50, err: "503 from the control plane" });
  });

  it("never hands out an earlier listing's entries afterwards", async () => {
    let again = false;
    const listing = createLiveListing(
      async function* () {
        yield again ? [] : [{ name: "alpha" } as Deployment];
      },
      memoryLogger().logger,
      manualTimers(),
    );
    await listing.stream(keyOf, () => undefined); // alpha's reconcile has not taken its entry
    again = true;
    expect([...((await listing.stream(keyOf, () => undefined)) ?? [])]).toEqual([]);
    listing.use(keyOf("alpha"));
    expect(listing.take(keyOf("alpha"))).toBeNull(); // deleted since the first listing
  });
});
