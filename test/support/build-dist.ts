import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

// dist/ for the tests that run the built CLI: `npm run build`'s tsc projects, compiled once per
// vitest run (test/global-setup.ts). Skipped only when a stamp proves dist/ is what these sources
// compile to: the hash of every input's content (not mtimes, which a checkout, cp -p or tar can
// leave older than the output) and the hash of every file in dist/ as that build left it (so a
// build of other sources, or an edit or deletion in dist/, since then means building again).

const INPUT_DIRS = ["src", "bench", "scripts"];
// TypeScript 7 (the native compiler, installed as typescript-7) builds and type-checks: ~4x less CPU
// than 5.9, whose JavaScript API typescript-eslint still needs (docs/testing.md "Speed").
const COMPILER = join("node_modules", "typescript-7", "bin", "tsc");
const INPUT_FILES = ["package.json", "package-lock.json", "node_modules/typescript-7/package.json"];
const STAMP = join("node_modules", ".cache", "plumb-test-build.json");

type Stamp = { inputs: string; outputs: string };

/** The tsc projects of package.json's build script, in order. */
async function buildConfigs(root: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
    scripts: { build: string };
  };
  const configs = [...pkg.scripts.build.matchAll(/\btsc\s+-p\s+(\S+)/g)].map((m) => m[1]!);
  if (configs.length === 0)
    throw new Error(`no "tsc -p CONFIG" in package.json's build script: update test/support/build-dist.ts`);
  return configs;
}

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** One hash over the paths and contents of `files` (a missing file hashes as missing). */
async function hashFiles(root: string, files: string[]): Promise<string> {
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(existsSync(join(root, file)) ? await readFile(join(root, file)) : "\0missing");
    hash.update("\0");
  }
  return hash.digest("hex");
}

async function hashInputs(root: string, configs: string[]): Promise<string> {
  const dirs = await Promise.all(INPUT_DIRS.map((d) => filesUnder(join(root, d))));
  const tsconfigs = (await readdir(root)).filter((f) => /^tsconfig.*\.json$/.test(f)).sort();
  const files = [...INPUT_FILES, ...tsconfigs, ...dirs.flat().map((f) => f.slice(root.length + 1))];
  return `${configs.join(" ")} ${await hashFiles(root, files)}`;
}

async function hashOutputs(root: string): Promise<string> {
  const files = await filesUnder(join(root, "dist"));
  return hashFiles(
    root,
    files.map((f) => f.slice(root.length + 1)),
  );
}

async function readStamp(root: string): Promise<Stamp | undefined> {
  try {
    return JSON.parse(await readFile(join(root, STAMP), "utf8")) as Stamp;
  } catch {
    return undefined;
  }
}

/**
 * Compiles each project with --noCheck: type errors are `npm run typecheck`'s to report (and
 * another change in progress must not stop the tests); any error tsc still reports means it could
 * not build, and fails with tsc's output.
 */
async function compile(root: string, config: string, outDir: string): Promise<void> {
  const tsc = join(root, COMPILER);
  try {
    await promisify(execFile)(process.execPath, [tsc, "-p", config, "--noCheck", "--outDir", outDir], {
      cwd: root,
      maxBuffer: 64 << 20,
    });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    const output = `${stdout}${stderr}`.trim() || String(error);
    throw new Error(
      `the build for the tests failed (tsc -p ${config} --noCheck); fix it and run again:\n${output}`,
      { cause: error },
    );
  }
}

/**
 * Replaces `dist` with `staging` by renames: dist/ is missing only between two of them. A build
 * swapping in at the same moment can take the place first: then move that one aside too. Where
 * node_modules/ is another file system (EXDEV), dist/ is deleted and copied instead.
 */
async function swapIn(staging: string, dist: string): Promise<void> {
  const aside = `${staging}-old`;
  const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;
  for (let attempt = 1; ; attempt++) {
    try {
      await rename(dist, aside);
    } catch (error) {
      if (errno(error) === "EXDEV") await rm(dist, { recursive: true, force: true });
      else if (errno(error) !== "ENOENT") throw error;
    }
    try {
      await rename(staging, dist);
      return;
    } catch (error) {
      if (errno(error) === "EXDEV") return await cp(staging, dist, { recursive: true });
      if ((errno(error) !== "ENOTEMPTY" && errno(error) !== "EEXIST") || attempt === 5) throw error;
    } finally {
      await rm(aside, { recursive: true, force: true });
    }
  }
}

/** Builds dist/ unless the stamp shows it is already these sources' build; says which it did. */
export async function buildDist(root: string): Promise<string> {
  const configs = await buildConfigs(root);
  const inputs = await hashInputs(root, configs);
  const stamp = await readStamp(root);
  if (stamp?.inputs === inputs && stamp.outputs === (await hashOutputs(root))) {
    return "dist/ is already the build of these sources (content hashes match): not rebuilt";
  }
  const started = performance.now();
  // From an empty directory: tsc never deletes the output of a source that was moved or removed,
  // and a test loading dist/ by path would pass against that stale file (as two did after a move).
  // Built beside dist/ and swapped in whole: another vitest run using dist/ meanwhile (a second
  // terminal, watch mode) sees the old build or the new one, never a missing or half-written one;
  // a failed build leaves the old one.
  // Beside dist/, at its depth: the source maps tsc writes name their sources relative to where
  // they are built, and one built deeper (node_modules/.cache/…) pointed four levels above the
  // project once renamed into dist/ (vitest then warned "points to missing source files" for each).
  const staging = await mkdtemp(join(root, ".dist-build-"));
  await chmod(staging, 0o755); // dist/'s mode as tsc makes it (mkdtemp's is 0700)
  try {
    for (const config of configs) await compile(root, config, staging);
    await swapIn(staging, join(root, "dist"));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const outputs = await hashOutputs(root);
  // A source changed while tsc ran: leave no stamp, so the next run builds again.
  if ((await hashInputs(root, configs)) === inputs) {
    await mkdir(join(root, STAMP, ".."), { recursive: true });
    await writeFile(join(root, STAMP), JSON.stringify({ inputs, outputs } satisfies Stamp));
  }
  return `dist/ built (${configs.map((c) => `tsc -p ${c}`).join(", ")}) in ${((performance.now() - started) / 1000).toFixed(1)} s`;
}
