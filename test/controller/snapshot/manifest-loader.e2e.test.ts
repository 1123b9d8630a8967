import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests } from "../../../src/manifest/load.js";
import { assertBuilt } from "../../support/built-cli.js";
import { manualTimers } from "../manual-timers.js";

// The controller's loader as built (the worker runs compiled JS): a tree of ordinary files loads in
// the event loop with no thread; one with a large file loads on a worker thread, stopped when idle.

type Loader = typeof import("../../../src/controller/snapshot/manifest-loader.js");
let loader: Loader;
let small: string;
let large: string;
const deployment = (name: string, extra = "") =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: external_container\n  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}\n  source_revision_config: {image_uri: "img:1"}\n${extra}`;

beforeAll(async () => {
  assertBuilt();
  const built = join(process.cwd(), "dist", "src", "controller", "snapshot", "manifest-loader.js");
  loader = (await import(pathToFileURL(built).href)) as Loader;
  small = await mkdtemp(join(tmpdir(), "plumb-loader-small-"));
  large = await mkdtemp(join(tmpdir(), "plumb-loader-large-"));
  for (const dir of [small, large]) await writeFile(join(dir, "a.yaml"), deployment("a"));
  const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: v\n`).join("");
  await writeFile(join(large, "hostile.yaml"), deployment("h", keys));
}, 120_000);
afterAll(async () => {
  await rm(small, { recursive: true, force: true });
  await rm(large, { recursive: true, force: true });
});

describe("the controller's manifest loader", () => {
  it("loads ordinary files in the event loop, without a thread", async () => {
    const load = loader.createManifestLoader(1024 * 1024, manualTimers());
    try {
      const result = await load.load(small);
      expect(result.manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
      expect(load.threadRunning()).toBe(false);
    } finally {
      await load.close();
    }
  });

  it("loads a tree with a large file on a worker thread, the same result, and stops it when idle", async () => {
    const timers = manualTimers();
    const load = loader.createManifestLoader(1024 * 1024, timers, { idleMs: 30_000 });
    try {
      const [off, whole] = await Promise.all([load.load(large), loadManifests(large)]);
      expect(off.problems).toEqual(whole.problems);
      // 20,000 keys in one mapping: refused by the parse's shape check (yaml-shape.ts) on the worker too.
      expect(off.problems.map((p) => p.code)).toContain("too-many-keys");
      expect(off.manifests.map((m) => m.manifest)).toEqual(whole.manifests.map((m) => m.manifest));
      expect(load.threadRunning()).toBe(true);
      await timers.advance(29_999);
      expect(load.threadRunning()).toBe(true);
      await timers.advance(1);
      expect(load.threadRunning()).toBe(false);
      // The next such load starts a thread again.
      expect((await load.load(large)).problems).toEqual(whole.problems);
      expect(load.threadRunning()).toBe(true);
    } finally {
      await load.close();
    }
    expect(load.threadRunning()).toBe(false);
  });
});
