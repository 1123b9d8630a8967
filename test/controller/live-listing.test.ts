import { describe, expect, it } from "vitest";
import { createLiveListing } from "../../src/controller/live-listing.js";
import type { Deployment } from "../../src/schema/deployment.js";
import { memoryLogger } from "./support.js";

/** The listing's source: the pages of a list, as the client yields them. */
const pagesOf = (...pages: Deployment[][]) =>
  async function* () {
    yield* pages;
  };

describe("live listing", () => {
  it("gives each marked object the listed deployment once, null when not live, undefined otherwise", async () => {
    const log = memoryLogger();
    const listing = createLiveListing(pagesOf([{ name: "alpha", id: "1" } as Deployment]), log.logger);
    expect(await listing.refresh()).toBe(true);
    listing.use("Deployment/alpha");
    listing.use("Deployment/beta");
    listing.use("Deployment/gamma");
    listing.forget("Deployment/gamma"); // its manifest changed since: look it up
    expect(listing.take("Deployment/alpha", "alpha")).toMatchObject({ id: "1" });
    expect(listing.take("Deployment/alpha", "alpha")).toBeUndefined();
    expect(listing.take("Deployment/beta", "beta")).toBeNull();
    expect(listing.take("Deployment/gamma", "gamma")).toBeUndefined();
  });

  it("lets go of each listed deployment once its object has taken it", async () => {
    const listing = createLiveListing(
      pagesOf([{ name: "alpha" } as Deployment], [{ name: "beta" } as Deployment]),
      memoryLogger().logger,
    );
    await listing.refresh();
    listing.use("Deployment/alpha");
    expect(listing.take("Deployment/alpha", "alpha")).toMatchObject({ name: "alpha" });
    listing.use("Deployment/beta"); // marked after alpha's reconcile started (the first scan does this)
    expect([...listing.live().keys()]).toEqual(["beta"]);
    expect([...listing.names()]).toEqual(["beta"]);
    expect(listing.take("Deployment/beta", "beta")).toMatchObject({ name: "beta" });
    expect(listing.live().size).toBe(0);
  });

  it("hands out copies: a reconcile changing what it took does not change the listing", async () => {
    const listing = createLiveListing(
      pagesOf([{ name: "alpha", id: "1" } as Deployment]),
      memoryLogger().logger,
    );
    await listing.refresh();
    const atStart = listing.live();
    atStart.get("alpha")!.id = "changed";
    listing.use("Deployment/alpha");
    expect(listing.take("Deployment/alpha", "alpha")).toEqual({ name: "alpha", id: "1" });
  });

  it("keeps the last listing and logs when the API does not answer, also after some pages", async () => {
    const log = memoryLogger();
    let fail = false;
    const listing = createLiveListing(async function* () {
      yield [{ name: fail ? "beta" : "alpha" } as Deployment];
      if (fail) throw new Error("503 from the control plane");
    }, log.logger);
    await listing.refresh();
    fail = true;
    expect(await listing.refresh()).toBe(false);
    expect([...listing.live().keys()]).toEqual(["alpha"]);
    expect(log.lines().at(-1)).toMatchObject({ level: 50, err: "503 from the control plane" });
  });
});
