import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { LoadResult } from "../../../src/manifest/load.js";
import type { LoadedManifest } from "../../../src/manifest/types.js";
import { createReadAtRest, treeAtRest } from "../../../src/controller/snapshot/read-at-rest.js";
import type { LoadedEnvironment } from "../../../src/manifest/types.js";
import { createLogger } from "../../../src/logger.js";

// A directory's read is used only once the files it read were at rest when it began; else it is read
// again once they are, and a file that never rests is used as read after a bound, with a warning.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-at-rest-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A load result naming `files` (only their names matter here). */
const holding = (...files: string[]): LoadResult => ({
  manifests: files.map((file) => ({ file }) as LoadedManifest),
  problems: [],
});

it("a file written during the read is read again once it has rested", async () => {
  const warnings: string[][] = [];
  const atRest = createReadAtRest({
    root: dir,
    settleMs: 30,
    stopping: () => false,
    warn: (f) => warnings.push(f),
  });
  const deferred: string[][] = [];
  let reads = 0;
  const result = await atRest.load(
    async () => {
      reads++;
      if (reads === 1) await writeFile(join(dir, "app.yaml"), "the rest\n"); // a writer going on meanwhile
      return holding("app.yaml");
    },
    (files) => deferred.push(files),
  );
  expect(result.manifests.map((m) => m.file)).toEqual(["app.yaml"]);
  // Read again (more than once when the filesystem's coarse clock lags the timer by a tick).
  expect(reads).toBeGreaterThanOrEqual(2);
  expect(deferred.length).toBe(reads - 1);
  expect(new Set(deferred.flat())).toEqual(new Set(["app.yaml"]));
  expect(warnings).toEqual([]);
  await atRest.close();
});

it("a file the last read held is looked at too (cut to a prefix without a document)", async () => {
  const atRest = createReadAtRest({ root: dir, settleMs: 30, stopping: () => false, warn: () => undefined });
  let reads = 0;
  await atRest.load(
    async () => holding("app.yaml"),
    () => undefined,
  ); // missing: nothing to wait for
  const deferred: string[][] = [];
  await atRest.load(
    async () => {
      if (reads++ === 0) await writeFile(join(dir, "app.yaml"), "# generated\n");
      return holding(); // the file's document is not written yet
    },
    (files) => deferred.push(files),
  );
  expect(deferred.length).toBeGreaterThanOrEqual(1);
  expect(new Set(deferred.flat())).toEqual(new Set(["app.yaml"]));
  await atRest.close();
});

it("a file that never rests is used as read after 40 settle times, with a warning", async () => {
  const warnings: string[][] = [];
  const atRest = createReadAtRest({
    root: dir,
    settleMs: 5,
    stopping: () => false,
    warn: (f) => warnings.push(f),
  });
  let reads = 0;
  await atRest.load(
    async () => {
      await writeFile(join(dir, "log.yaml"), `line ${++reads}\n`);
      return holding("log.yaml");
    },
    () => undefined,
  );
  expect(reads).toBeGreaterThan(1);
  expect(warnings).toEqual([["log.yaml"]]);
  await atRest.close();
});

it("the environments' read of the tree: an Environment file written during it is read again (a directory only)", async () => {
  let reads = 0;
  const loader = {
    loadTree: async (): Promise<LoadResult> => {
      if (reads++ === 0) await writeFile(join(dir, "environments.yaml"), "kind: Environment\n");
      return {
        manifests: [],
        environments: [{ file: "environments.yaml" } as LoadedEnvironment],
        problems: [],
      };
    },
    close: async () => undefined,
  };
  const options = { settleMs: 30, log: createLogger({ level: "silent" }), stopping: () => false };
  expect(treeAtRest(loader, { kind: "git", manifestRoot: dir }, options)).toBe(loader);
  const tree = treeAtRest(loader, { kind: "dir", manifestRoot: dir }, options);
  await tree.loadTree(dir);
  expect(reads).toBeGreaterThanOrEqual(2);
  await tree.close();
});
