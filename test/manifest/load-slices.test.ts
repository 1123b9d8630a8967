import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests, loadManifestsInSlices } from "../../src/manifest/load.js";
import type { LoadedManifest } from "../../src/manifest/types.js";

// The controller's way of loading (in slices of its event loop) must give exactly what
// loadManifests gives, hand a tree with a large file to a worker, and really yield.

let root: string;
const deployment = (name: string, extra = "") =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: external_container\n  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}\n  source_revision_config: {image_uri: "img:1"}\n${extra}`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-slices-"));
  await mkdir(join(root, "team"));
  for (let i = 0; i < 40; i++) await writeFile(join(root, "team", `a-${i}.yaml`), deployment(`agent-${i}`));
  await writeFile(join(root, "dup.yaml"), deployment("agent-3")); // duplicate name: an error across files
  await writeFile(join(root, "bad.yaml"), deployment("bad", "  unknown_field: 1\n"));
  await writeFile(join(root, "two.yaml"), `${deployment("two-a")}---\n${deployment("two-b")}`);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("loadManifestsInSlices", () => {
  it("gives what loadManifests gives: manifests, positions and problems across files", async () => {
    const [sliced, whole] = await Promise.all([
      loadManifestsInSlices(root, { maxFileBytes: 32 * 1024, sliceMs: 0 }),
      loadManifests(root),
    ]);
    if ("offThread" in sliced) throw new Error("no file here is large");
    expect(sliced.problems).toEqual(whole.problems);
    expect(sliced.problems.map((p) => p.code)).toEqual(expect.arrayContaining(["duplicate-name"]));
    expect(sliced.manifests.map((m) => [m.file, m.manifest, m.location])).toEqual(
      whole.manifests.map((m) => [m.file, m.manifest, m.location]),
    );
    expect(sliced.manifests[0]!.locate(["spec", "source"])).toEqual(
      whole.manifests[0]!.locate(["spec", "source"]),
    );
  });

  it("yields to the event loop between slices", async () => {
    const order: string[] = [];
    const loading = loadManifestsInSlices(root, { maxFileBytes: 32 * 1024, sliceMs: 0 }).then(() =>
      order.push("loaded"),
    );
    setImmediate(() => order.push("other work"));
    await loading;
    expect(order).toEqual(["other work", "loaded"]);
  });

  it("stops at a file over maxFileBytes and names it, for a worker to load the tree", async () => {
    const big = await mkdtemp(join(tmpdir(), "plumb-slices-big-"));
    try {
      await writeFile(join(big, "a.yaml"), deployment("a"));
      const keys = Array.from({ length: 5_000 }, (_, i) => `  k${i}: v\n`).join("");
      await writeFile(join(big, "z-hostile.yaml"), deployment("h", keys));
      expect(await loadManifestsInSlices(big, { maxFileBytes: 32 * 1024, sliceMs: 10 })).toEqual({
        offThread: "z-hostile.yaml",
      });
      // Over the size limit itself it is refused unread, as everywhere: no worker needed.
      const refused = await loadManifestsInSlices(big, {
        maxBytes: 16 * 1024,
        maxFileBytes: 8 * 1024,
        sliceMs: 10,
      });
      expect("offThread" in refused ? [] : refused.problems.map((p) => [p.file, p.code])).toEqual([
        ["z-hostile.yaml", "manifest-too-large"],
      ]);
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });
});

describe("loadManifestsInSlices validates each file as it is read", () => {
  it("reads in the order problems name files: `x.yaml` before `x/a.yaml`, so the same copy is the duplicate", async () => {
    const tree = await mkdtemp(join(tmpdir(), "plumb-slices-order-"));
    try {
      await mkdir(join(tree, "x"));
      // Walked directory first (x/ sorts before x.yaml by name), read file first ("." < "/").
      await writeFile(join(tree, "x", "a.yaml"), deployment("Same"));
      await writeFile(join(tree, "x.yaml"), `# one line more\n${deployment("same")}`);
      const [sliced, whole] = await Promise.all([
        loadManifestsInSlices(tree, { maxFileBytes: 32 * 1024, sliceMs: 0 }),
        loadManifests(tree),
      ]);
      if ("offThread" in sliced) throw new Error("no file here is large");
      expect(sliced.problems).toEqual(whole.problems);
      expect(sliced.problems.map((p) => [p.file, p.code, p.message])).toEqual([
        [
          "x/a.yaml",
          "duplicate-name",
          "deployment Same differs only by case from same at x.yaml:5:9; names must be unique ignoring case",
        ],
      ]);
      expect(sliced.manifests.map((m) => m.file)).toEqual(["x.yaml"]);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it("hands each manifest that passed to `compact` at once; the result and its problems are loadManifests'", async () => {
    const tree = await mkdtemp(join(tmpdir(), "plumb-slices-compact-"));
    try {
      for (let i = 0; i < 5; i++) await writeFile(join(tree, `a-${i}.yaml`), deployment(`agent-${i}`));
      await writeFile(join(tree, "b-dup.yaml"), `\n\n${deployment("agent-1")}`);
      const named = `metadata:\n  name: env-agent\n  environments: [prod]\n`;
      await writeFile(
        join(tree, "c-env.yaml"),
        deployment("env-agent").replace("metadata:\n  name: env-agent\n", named),
      );
      const compacted: string[] = [];
      const compact = (loaded: LoadedManifest): LoadedManifest => {
        compacted.push(loaded.file);
        const { manifest, file, location } = loaded;
        return {
          manifest,
          file,
          location,
          locate: (path) => loaded.locate(path),
          locateValue: (path) => loaded.locateValue!(path),
        };
      };
      const [sliced, whole] = await Promise.all([
        loadManifestsInSlices(tree, { maxFileBytes: 32 * 1024, sliceMs: 0, compact }),
        loadManifests(tree),
      ]);
      if ("offThread" in sliced) throw new Error("no file here is large");
      // The duplicate's message names where the first one's name is, read from its compact form.
      expect(sliced.problems).toEqual(whole.problems);
      expect(sliced.problems.map((p) => [p.file, p.code])).toEqual([
        ["b-dup.yaml", "duplicate-name"],
        ["c-env.yaml", "unknown-environment"],
      ]);
      expect(sliced.manifests.map((m) => [m.file, m.manifest, m.location])).toEqual(
        whole.manifests.map((m) => [m.file, m.manifest, m.location]),
      );
      expect(compacted).toEqual(["a-0.yaml", "a-1.yaml", "a-2.yaml", "a-3.yaml", "a-4.yaml"]);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });
});
