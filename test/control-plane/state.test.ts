import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StatefulModule } from "../../src/control-plane/context.js";
import { DeploymentStore } from "../../src/control-plane/deployments/store.js";
import { HttpError } from "../../src/control-plane/http/http-errors.js";
import { startStateKeeper } from "../../src/control-plane/state.js";

// A change that cannot even be serialised (here: a module whose snapshot throws on one tenant's
// value) is undone before anything is written; the other tenants' writes, before and after it,
// are untouched and survive a restart.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-state-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Values per tenant; a snapshot throws while any value is "poison", as a RangeError once did. */
function tenantValues(name: string) {
  let values: Record<string, string> = {};
  const module: StatefulModule = {
    name,
    snapshot: () => {
      if (Object.values(values).includes("poison")) throw new RangeError("Invalid string length");
      return { ...values };
    },
    restore: (data) => {
      values = { ...((data as Record<string, string> | null) ?? {}) };
    },
  };
  return { module, values: () => values, set: (tenant: string, v: string) => (values[tenant] = v) };
}

const keeper = (modules: StatefulModule[]) =>
  startStateKeeper(dir, new DeploymentStore({ revisionMs: 0, readyMs: 0 }), modules, Date.now);

describe("state keeper: a write is all or nothing", () => {
  it("undoes a change that cannot be serialised, keeps the others, and serves the next write", async () => {
    const threads = tenantValues("threads");
    const orgs = tenantValues("orgs");
    const kept = await keeper([threads.module, orgs.module]);

    threads.set("tenant-a", "a1");
    const acknowledged = kept.commit(); // in flight while the hostile write arrives
    threads.set("tenant-b", "poison");
    orgs.set("tenant-b", "b-org");
    const hostile = kept.commit().then(
      () => undefined,
      (e: unknown) => e,
    );
    await expect(acknowledged).resolves.toBeUndefined();
    const error = await hostile;
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).statusCode).toBe(500);
    expect((error as HttpError).detail).toMatch(
      /could not be stored \(Invalid string length\) and was undone/,
    );
    expect(threads.values()).toEqual({ "tenant-a": "a1" });
    expect(orgs.values()).toEqual({});

    threads.set("tenant-c", "c1");
    await kept.commit();
    await kept.close();

    const again = [tenantValues("threads"), tenantValues("orgs")];
    await (await keeper(again.map((m) => m.module))).close();
    expect(again[0]!.values()).toEqual({ "tenant-a": "a1", "tenant-c": "c1" });
    expect(again[1]!.values()).toEqual({});
  });
});
