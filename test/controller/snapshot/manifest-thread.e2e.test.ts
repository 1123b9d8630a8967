import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests } from "../../../src/manifest/load.js";
import { assertBuilt } from "../../support/built-cli.js";

// The controller's off-thread loader as built (the worker runs compiled JS): it must give exactly
// what loading in-thread gives, positions included, and report a missing root the same way.

type Thread = typeof import("../../../src/controller/snapshot/manifest-thread.js");
let thread: Thread;
let root: string;

beforeAll(async () => {
  assertBuilt();
  const built = join(process.cwd(), "dist", "src", "controller", "snapshot", "manifest-thread.js");
  thread = (await import(pathToFileURL(built).href)) as Thread;
  root = await mkdtemp(join(tmpdir(), "plumb-thread-"));
  await mkdir(join(root, "team"));
  await writeFile(
    join(root, "team", "a.yaml"),
    `# first\napiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:
  source: external_container
  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}
  source_revision_config: {image_uri: "img:1"}\n`,
  );
  const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: v\n`).join("");
  await writeFile(
    join(root, "hostile.yaml"),
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: h}\nspec:\n${keys}`,
  );
}, 120_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe("manifest loader thread", () => {
  it("loads what loadManifests loads, with positions read from disk", async () => {
    const loader = thread.startManifestThread(1024 * 1024);
    expect(loader).toBeDefined();
    try {
      const [off, on] = await Promise.all([loader!.load(root), loadManifests(root)]);
      expect(off.problems).toEqual(on.problems);
      // 20,000 keys in one mapping: refused by the parse's shape check (yaml-shape.ts) on the worker too.
      expect(off.problems.map((p) => p.code)).toContain("too-many-keys");
      expect(off.manifests.map((m) => [m.file, m.manifest])).toEqual(
        on.manifests.map((m) => [m.file, m.manifest]),
      );
      expect(off.manifests[0]!.location).toEqual({ file: "team/a.yaml", line: 3, column: 1 });
      expect(off.manifests[0]!.locate(["spec", "source"])).toEqual({
        file: "team/a.yaml",
        line: 7,
        column: 3,
      });
      // A second load reuses the thread; a missing root is the same typed error as in-thread.
      await expect(loader!.load(join(root, "gone"))).rejects.toMatchObject({ code: "path-not-found" });
      expect((await loader!.load(join(root, "team"))).manifests).toHaveLength(1);
    } finally {
      await loader!.close();
    }
  });

  it("honours the size limit it was started with", async () => {
    const loader = thread.startManifestThread(1000);
    try {
      const { problems } = await loader!.load(root);
      expect(problems.map((p) => [p.file, p.code])).toEqual([["hostile.yaml", "manifest-too-large"]]);
    } finally {
      await loader!.close();
    }
  });
});
