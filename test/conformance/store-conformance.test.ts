import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type ConformanceTarget } from "./target.js";

// The store as a memory feature uses it through @langchain/langgraph-sdk (docs/control-plane.md
// "Store"): put, get, search under a prefix with a filter, namespaces, delete.

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

describe("SDK conformance: store", () => {
  it("putItem, getItem, searchItems, listNamespaces, deleteItem", async () => {
    const user = `user-${Date.now()}`;
    await sdk.store.putItem(["memories", user, "food"], "likes", { text: "pizza", stars: 5 });
    await sdk.store.putItem(["memories", user, "food"], "dislikes", { text: "olives", stars: 1 });
    await sdk.store.putItem(["memories", user, "music"], "likes", { text: "jazz", stars: 4 });

    const item = await sdk.store.getItem(["memories", user, "food"], "likes");
    expect(item).toMatchObject({
      namespace: ["memories", user, "food"],
      key: "likes",
      value: { text: "pizza", stars: 5 },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await sdk.store.getItem(["memories", user, "food"], "missing")).toBeNull();

    const all = await sdk.store.searchItems(["memories", user]);
    expect(all.items.map((i) => `${i.namespace.at(-1)}/${i.key}`).sort()).toEqual([
      "food/dislikes",
      "food/likes",
      "music/likes",
    ]);
    const liked = await sdk.store.searchItems(["memories", user], { filter: { stars: { $gte: 4 } } });
    expect(liked.items.map((i) => String(i.value.text)).sort()).toEqual(["jazz", "pizza"]);
    const exact = await sdk.store.searchItems(["memories", user, "food"], { filter: { text: "olives" } });
    expect(exact.items.map((i) => i.key)).toEqual(["dislikes"]);
    expect((await sdk.store.searchItems(["memories", user], { limit: 1, offset: 1 })).items).toHaveLength(1);

    const spaces = await sdk.store.listNamespaces({ prefix: ["memories", user] });
    expect(spaces.namespaces).toEqual([
      ["memories", user, "food"],
      ["memories", user, "music"],
    ]);
    const shallow = await sdk.store.listNamespaces({ prefix: ["memories", user], maxDepth: 2 });
    expect(shallow.namespaces).toEqual([["memories", user]]);

    await sdk.store.putItem(["memories", user, "food"], "likes", { text: "pasta", stars: 5 });
    expect((await sdk.store.getItem(["memories", user, "food"], "likes"))?.value).toEqual({
      text: "pasta",
      stars: 5,
    });
    await sdk.store.deleteItem(["memories", user, "food"], "likes");
    expect(await sdk.store.getItem(["memories", user, "food"], "likes")).toBeNull();
  });
});
