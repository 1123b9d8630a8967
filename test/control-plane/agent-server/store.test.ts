import { Client } from "@langchain/langgraph-sdk";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createMemoryStore,
  STORE_LIMITS,
} from "../../../src/control-plane/agent-server/memory/memory-store.js";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../src/control-plane/server.js";
import { createAgentDeployment } from "./test-context.js";

// The store on the real control plane: kept with --data, one store per deployment (so per
// tenant), and its limits.
const sdkFor = (cp: RunningControlPlane, id: string, apiKey = DEFAULT_API_KEY) =>
  new Client({ apiUrl: `${cp.url}/agents/${id}`, apiKey, callerOptions: { maxRetries: 0 } });

describe("store on plumb's agent server", () => {
  it("keeps items across a restart with --data; each deployment has its own store", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-store-"));
    try {
      const options = {
        dataDir,
        revisionSeconds: 0,
        deploymentReadySeconds: 0,
        apiKeys: [
          { key: DEFAULT_API_KEY, tenants: ["acme"] },
          { key: "other-key", tenants: ["globex"] },
        ],
      };
      const first = await startControlPlane(options);
      const id = await createAgentDeployment(first.url, "kept");
      const neighbour = await createAgentDeployment(first.url, "neighbour");
      const theirs = await createAgentDeployment(first.url, "theirs", "other-key");
      await sdkFor(first, id).store.putItem(["prefs"], "theme", { dark: true });
      expect(await sdkFor(first, neighbour).store.getItem(["prefs"], "theme")).toBeNull();
      expect((await sdkFor(first, theirs, "other-key").store.searchItems([])).items).toEqual([]);
      await expect(sdkFor(first, id, "other-key").store.searchItems([])).rejects.toMatchObject({
        status: 404,
      });
      await first.stop();

      const second = await startControlPlane(options);
      const kept = await sdkFor(second, id).store.getItem(["prefs"], "theme");
      expect(kept).toMatchObject({ namespace: ["prefs"], key: "theme", value: { dark: true } });
      await second.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a key, a value or a namespace over its limit (422) naming the field", async () => {
    const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
    try {
      const id = await createAgentDeployment(cp.url, "limits");
      const put = (body: unknown) =>
        fetch(`${cp.url}/agents/${id}/store/items`, {
          method: "PUT",
          headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const ok = { namespace: ["a"], key: "k", value: { v: 1 } };
      expect((await put(ok)).status).toBe(204);
      const cases: Array<[unknown, string]> = [
        [{ ...ok, key: "k".repeat(STORE_LIMITS.keyChars + 1) }, "key"],
        [{ ...ok, value: { v: "x".repeat(STORE_LIMITS.valueBytes) } }, "value"],
        [{ ...ok, value: [1] }, "value"],
        [{ ...ok, namespace: Array.from({ length: STORE_LIMITS.labels + 1 }, () => "n") }, "namespace"],
        [{ ...ok, namespace: ["with.dot"] }, "namespace"],
        [{ ...ok, namespace: [] }, "namespace"],
      ];
      for (const [body, field] of cases) {
        const response = await put(body);
        expect(response.status).toBe(422);
        const { detail } = (await response.json()) as { detail: Array<{ loc: string[] }> };
        expect(detail.map((issue) => issue.loc.at(-1))).toEqual([field]);
      }
    } finally {
      await cp.stop();
    }
  });

  it("holds at most itemsPerDeployment items per deployment; replacing one still works when full", () => {
    const store = createMemoryStore();
    const at = "2026-01-01T00:00:00.000Z";
    const item = (key: string) => ({ namespace: ["n"], key, value: {}, updated_at: at });
    for (let i = 0; i < STORE_LIMITS.itemsPerDeployment; i++)
      expect(store.put("d", item(`k${i}`))).toBe("stored");
    expect(store.put("d", item("one-more"))).toBe("full");
    expect(store.put("d", item("k0"))).toBe("stored");
    expect(store.put("other", item("one-more"))).toBe("stored");
  });
});
