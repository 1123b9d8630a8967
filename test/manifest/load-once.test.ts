import { describe, expect, it } from "vitest";
import { loadManifestsOnce, type ManifestLoads } from "../../src/manifest/load.js";
import { useTempRoots } from "./helpers.js";

// One command's environments plan the same tree: loadManifestsOnce parses it once per root and
// size limit within the command's `loads`, and afresh without them (every other caller).

const t = useTempRoots("plumb-load-once-");
const deployment = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n`;
const names = (result: Awaited<ReturnType<typeof loadManifestsOnce>>) =>
  result.manifests.map((m) => m.manifest.metadata.name);

describe("loadManifestsOnce", () => {
  it("reads a root once within one command's loads, and again for another size limit or without them", async () => {
    await t.put("a.yaml", deployment("a"));
    const loads: ManifestLoads = new Map();
    const first = await loadManifestsOnce(loads, t.root, { maxBytes: 1_000_000 });
    await t.put("b.yaml", deployment("b"));
    const again = await loadManifestsOnce(loads, t.root, { maxBytes: 1_000_000 });
    expect(again).toBe(first);
    expect(names(again)).toEqual(["a"]);
    expect(names(await loadManifestsOnce(loads, t.root, { maxBytes: 2_000_000 }))).toEqual(["a", "b"]);
    expect(names(await loadManifestsOnce(undefined, t.root, { maxBytes: 1_000_000 }))).toEqual(["a", "b"]);
  });
});
