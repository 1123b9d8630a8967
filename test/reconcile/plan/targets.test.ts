import { describe, expect, it } from "vitest";
import { closeNames, readLiveDeployments, type LiveReader } from "../../../src/reconcile/plan/targets.js";
import type { Deployment } from "../../../src/schema/deployment.js";

describe("closeNames", () => {
  it("suggests names within a few edits, closest first, at most three", () => {
    const names = ["api-gateway", "api-gateway-eu", "billing", "search", "api-gate"];
    expect(closeNames("api-gatway", names)).toEqual(["api-gateway", "api-gate"]);
    expect(closeNames("billnig", names)).toEqual(["billing"]);
    expect(closeNames("zzz", names)).toEqual([]);
    expect(closeNames("a", ["b", "c", "d", "e"])).toHaveLength(3);
  });
});

describe("readLiveDeployments", () => {
  // An in-memory reader recording which calls the plan made (the wire is tested in test/cli/targets.e2e).
  const reader = () => {
    const calls: string[] = [];
    const all = ["a", "b", "c"].map((name) => ({ name }) as Deployment);
    const client: LiveReader = {
      listDeployments: async () => (calls.push("list"), all),
      findDeploymentByName: async (name) => (
        calls.push(`find ${name}`),
        all.find((d) => d.name === name) ?? null
      ),
    };
    return { calls, client };
  };

  it("lists everything without targets, and above the lookup limit", async () => {
    const { calls, client } = reader();
    expect(await readLiveDeployments(client, undefined)).toHaveLength(3);
    expect(await readLiveDeployments(client, ["a", "b", "c"], { lookupLimit: 2 })).toHaveLength(3);
    expect(calls).toEqual(["list", "list"]);
  });

  it("looks each of a few targets up once, leaving out the ones that do not exist", async () => {
    const { calls, client } = reader();
    const found = await readLiveDeployments(client, ["b", "x", "b"]);
    expect(found.map((d) => d.name)).toEqual(["b"]);
    expect(calls).toEqual(["find b", "find x"]);
  });
});
