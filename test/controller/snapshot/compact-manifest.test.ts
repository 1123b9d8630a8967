import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compactLoaded } from "../../../src/controller/snapshot/compact-manifest.js";
import { loadManifests } from "../../../src/manifest/load.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-compact-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const doc = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/${name}:1\n`;

describe("compact manifests of the controller's snapshot", () => {
  it("answer positions as the loaded manifest does, reading field positions again from the file", async () => {
    await writeFile(join(dir, "two.yaml"), `# two deployments\n${doc("alpha")}---\n${doc("beta")}`);
    const fresh = (await loadManifests(dir)).manifests;
    const compact = fresh.map((l) => compactLoaded(l, dir));
    const image = ["spec", "source_revision_config", "image_uri"] as const;
    const missing = ["spec", "secrets", 0, "name"] as const; // the nearest existing ancestor
    for (const [i, loaded] of compact.entries()) {
      expect(loaded.manifest).toEqual(fresh[i]!.manifest);
      expect(loaded.manifest).not.toBe(fresh[i]!.manifest); // a copy: its strings are no slices of the file text
      expect(loaded.location).toEqual(fresh[i]!.location);
      expect(loaded.locate(image)).toEqual(fresh[i]!.locate(image)); // read again from the file
      expect(loaded.locate(missing)).toEqual(fresh[i]!.locate(missing));
    }
    expect(compact.map((l) => [l.location.line, l.locate(image).line])).toEqual([
      [3, 9],
      [12, 18],
    ]);
  });

  it("falls back to the document's start when the file no longer defines the object", async () => {
    await writeFile(join(dir, "a.yaml"), doc("alpha"));
    const [loaded] = (await loadManifests(dir)).manifests.map((l) => compactLoaded(l, dir));
    expect(loaded!.location).toEqual({ file: "a.yaml", line: 2, column: 1 });
    await writeFile(join(dir, "a.yaml"), doc("renamed"));
    expect(loaded!.locate(["spec", "source"])).toEqual({ file: "a.yaml", line: 2, column: 1 });
  });
});
