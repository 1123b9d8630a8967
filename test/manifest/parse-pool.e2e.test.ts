import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Pool from "../../src/manifest/parse/parse-pool.js";
import type { ParseResult } from "../../src/manifest/parse/parse.js";

// The worker threads exist only as compiled JavaScript: this test loads dist/ (built once per run by
// vitest's globalSetup) and parses one tree on 3 threads and on 1, expecting the same results.

let root: string;
let pool: typeof Pool;

const deployment = (i: number) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent-${i}
spec:
  source: external_container
  source_revision_config:
    image_uri: registry.example/agent-${i}:1
`;

beforeAll(async () => {
  pool = (await import(
    join(process.cwd(), "dist", "src", "manifest", "parse", "parse-pool.js")
  )) as typeof Pool;
  root = await realpath(await mkdtemp(join(tmpdir(), "plumb-parse-pool-")));
  await mkdir(join(root, "d"));
  const files: [string, string][] = [];
  for (let i = 0; i < 30; i++) files.push([`d/agent-${i}.yaml`, deployment(i)]);
  files.push(["d/broken.yaml", "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: x\n"]);
  files.push(["d/two.yaml", `${deployment(100)}---\n${deployment(101)}---\nkind: ConfigMap\n`]);
  files.push(["d/foreign.yaml", "apiVersion: v1\nkind: ConfigMap\n"]);
  files.push(["d/big.yaml", `${deployment(200)}# ${"x".repeat(70 * 1024)}\n`]); // keeps its tree: parsed on main
  files.push(["d/empty.yaml", ""]);
  files.push(["d/latin1.yaml", "\xff\xfe"]);
  for (const [name, text] of files)
    await writeFile(join(root, name), text, name.includes("latin1") ? "latin1" : "utf8");
  await symlink("/etc/hostname", join(root, "d", "outside.yaml"));
});

afterAll(() => rm(root, { recursive: true, force: true }));

const yamlFiles = async () => {
  const { readdir } = await import("node:fs/promises");
  const names = (await readdir(join(root, "d"))).sort();
  // As the loader lists them: a symlink's real path resolved (this one points out of the root).
  return Promise.all(
    names.map(async (name) => ({ path: join(root, "d", name), real: await realpath(join(root, "d", name)) })),
  );
};

/** What a caller can see of a result: documents, their first-line positions and a field's, problems. */
const seen = (results: ParseResult[]) =>
  results.map(({ documents, problems }) => ({
    documents: documents.map(({ file, index, value, locators }) => ({
      file,
      index,
      value,
      start: locators.start,
      image: locators.value(["spec", "source_revision_config", "image_uri"]),
    })),
    problems,
  }));

describe("parseFiles on worker threads", () => {
  it("gives what one thread gives, file by file and in order: values, positions and problems", async () => {
    const files = await yamlFiles();
    const context = { base: root, realBase: root, maxBytes: 1024 * 1024 };
    const one = await pool.parseFiles(files, context, 1);
    // Only workers parse (here: false), so their answers are what is compared; then all three.
    const stats = { workers: 0, failed: 0, chunksOnWorkers: 0 };
    const inOrder: string[] = [];
    const onWorkers = await pool.parseFiles(files, context, 2, {
      stats,
      here: false,
      chunkFiles: 5,
      inOrder: (results) => inOrder.push(...results.map((r) => r.documents[0]?.file ?? "")),
    });
    expect(stats).toEqual({
      workers: 2,
      failed: 0,
      chunksOnWorkers: Math.ceil(files.length / 5),
    });
    expect(seen(onWorkers)).toEqual(seen(one));
    expect(inOrder).toEqual(one.map((r) => r.documents[0]?.file ?? ""));
    const three = await pool.parseFiles(files, context, 3, { chunkFiles: 4 });
    expect(seen(three)).toEqual(seen(one));
    const codes = one.flatMap((r) => r.problems.map((p) => p.code)).sort();
    expect(codes).toEqual(
      expect.arrayContaining(["yaml-syntax", "empty-file", "invalid-encoding", "symlink-outside-root"]),
    );
    const image = seen(three)
      .flatMap((r) => r.documents)
      .find((d) => d.value.metadata && (d.value.metadata as { name: string }).name === "agent-101");
    expect(image?.image).toMatchObject({ file: "d/two.yaml", line: 17 }); // the second document's field
  });

  it("a worker that fails costs time, never a result: the chunk it took is parsed here", async () => {
    const files = await yamlFiles();
    const context = { base: root, realBase: root, maxBytes: 1024 * 1024 };
    const one = await pool.parseFiles(files, context, 1);
    const stats = { workers: 0, failed: 0, chunksOnWorkers: 0 };
    const worker = new URL("../fixtures/parse-pool/crashing-worker.mjs", import.meta.url);
    const inOrder: number[] = [];
    const parsed = await pool.parseFiles(files, context, 2, {
      stats,
      worker,
      here: false,
      chunkFiles: 5,
      inOrder: (results) => inOrder.push(results.length),
    });
    expect(stats).toEqual({ workers: 2, failed: 2, chunksOnWorkers: 0 });
    expect(seen(parsed)).toEqual(seen(one));
    expect(inOrder.reduce((a, b) => a + b, 0)).toBe(files.length); // every file handed on, once
  });

  it("workers started before the files are known (startParsePool) give what one thread gives", async () => {
    const files = await yamlFiles();
    const context = { base: root, realBase: root, maxBytes: 1024 * 1024 };
    const one = await pool.parseFiles(files, context, 1);
    const stats = { workers: 0, failed: 0, chunksOnWorkers: 0 };
    const started = pool.startParsePool(2);
    const parsed = await pool.parseFiles(files, context, 3, {
      pool: started,
      stats,
      here: false,
      chunkFiles: 5,
    });
    expect(stats).toEqual({ workers: 2, failed: 0, chunksOnWorkers: Math.ceil(files.length / 5) });
    expect(seen(parsed)).toEqual(seen(one));
  });

  it("a started pool that gets no files ends: its workers exit, waiting for nothing", async () => {
    const started = pool.startParsePool(2);
    const exits = started.workers.map(({ worker }) => new Promise((resolve) => worker.once("exit", resolve)));
    const files = await yamlFiles();
    // One thread asked for (a tree below the threshold): the pool is stopped unused.
    await pool.parseFiles(files, { base: root, realBase: root, maxBytes: 1024 * 1024 }, 1, { pool: started });
    await Promise.all(exits);
    expect(await Promise.all(started.workers.map(({ ended }) => ended))).toEqual([false, false]);
  });

  it("loadManifests of a big tree in parallel (workers started after its first chunk) gives one thread's result", async () => {
    const { loadManifests } = (await import(
      join(process.cwd(), "dist", "src", "manifest", "load.js")
    )) as typeof import("../../src/manifest/load.js");
    const many = join(root, "many");
    await mkdir(join(many, "a"), { recursive: true });
    for (let i = 0; i < pool.PARALLEL_MIN_FILES + 50; i++)
      // Not ASCII: yaml reads these, and the workers take part (plain manifests stay on one thread).
      await writeFile(join(many, i % 2 ? "a" : "", `agent-${i}.yaml`), `# café\n${deployment(i)}`);
    await writeFile(
      join(many, "a", "broken.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: x\n",
    );
    const one = await loadManifests(many);
    const parallel = await loadManifests(many, { parallel: true });
    expect(parallel.problems).toEqual(one.problems);
    expect(parallel.problems.map((p) => p.code)).toContain("yaml-syntax");
    expect(parallel.manifests.map((m) => [m.file, m.location, m.manifest])).toEqual(
      one.manifests.map((m) => [m.file, m.location, m.manifest]),
    );
    expect(parallel.manifests).toHaveLength(pool.PARALLEL_MIN_FILES + 50);
  });

  it("parses a tree of plain manifests here alone, and gives the workers one that yaml reads", async () => {
    const dir = join(root, "plain");
    await mkdir(dir);
    const context = { base: dir, realBase: dir, maxBytes: 1024 * 1024 };
    const tree = async (text: (i: number) => string) => {
      for (let i = 0; i < 20; i++)
        await writeFile(join(dir, `agent-${String(i).padStart(2, "0")}.yaml`), text(i));
      return Array.from({ length: 20 }, (_, i) => {
        const path = join(dir, `agent-${String(i).padStart(2, "0")}.yaml`);
        return { path, real: path };
      });
    };
    for (const [text, workers] of [
      [deployment, 0], // read by line-compose.ts: the first chunk tells, the workers end
      [(i: number) => `# not ASCII, so yaml reads it: café\n${deployment(i)}`, 1],
    ] as const) {
      const files = await tree(text);
      const one = await pool.parseFiles(files, context, 1);
      const stats = { workers: 0, failed: 0, chunksOnWorkers: 0 };
      const inOrder: string[] = [];
      const parsed = await pool.parseFiles(files, context, 2, {
        stats,
        chunkFiles: 5,
        inOrder: (results) => inOrder.push(...results.map((r) => r.documents[0]?.file ?? "")),
      });
      expect(stats.workers).toBe(workers);
      expect(seen(parsed)).toEqual(seen(one));
      expect(inOrder).toEqual(one.map((r) => r.documents[0]?.file ?? ""));
    }
  });

  it("uses one thread below the file threshold or on one core, else one per core up to 4", () => {
    expect(pool.parseThreads(pool.PARALLEL_MIN_FILES - 1, 8)).toBe(1);
    expect(pool.parseThreads(pool.PARALLEL_MIN_FILES, 1)).toBe(1);
    expect(pool.parseThreads(pool.PARALLEL_MIN_FILES, 2)).toBe(2);
    expect(pool.parseThreads(10_000, 16)).toBe(4);
  });
});
