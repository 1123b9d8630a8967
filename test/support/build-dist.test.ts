import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildDist } from "./build-dist.js";

// The suite's one build (test/global-setup.ts) on a one-file project: it may skip only when dist/
// is provably these sources' build; a stale dist/ must never pass; a rebuild never leaves another
// run without dist/.

let root: string;
const put = async (file: string, text: string) => {
  await mkdir(join(root, file, ".."), { recursive: true });
  await writeFile(join(root, file), text);
};
const built = () => readFile(join(root, "dist", "src", "a.js"), "utf8");

// Without TypeScript's default library (noLib): the few global types tsc requires are declared in
// src/globals.d.ts (which emits nothing). Each of the nine builds here read lib.*.d.ts for a
// one-line source: about 1.5 s of CPU each, 0.3 s without.
const COMPILER_OPTIONS = {
  target: "es2023",
  module: "nodenext",
  outDir: "dist",
  rootDir: ".",
  types: [],
  noLib: true,
};
const GLOBALS = ["Array<T>", "Boolean", "Function", "IArguments", "Number", "Object", "RegExp", "String"]
  .concat(["CallableFunction", "NewableFunction"]) // TypeScript 7 is strict by default
  .map((type) => `interface ${type} {}\n`)
  .join("");

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-build-dist-"));
  // Only the compiler: the stamp goes to the project's own node_modules/.cache, not this one's.
  await mkdir(join(root, "node_modules"));
  await symlink(
    join(process.cwd(), "node_modules", "typescript-7"),
    join(root, "node_modules", "typescript-7"),
  );
  await put("package.json", JSON.stringify({ type: "module", scripts: { build: "tsc -p tsconfig.json" } }));
  await put("tsconfig.json", JSON.stringify({ compilerOptions: COMPILER_OPTIONS, include: ["src"] }));
  await put("src/globals.d.ts", GLOBALS);
  await put("src/a.ts", "export const a: number = 1;\n");
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it("builds, then skips while the sources and dist/ are unchanged", async () => {
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  expect(await built()).toContain("a = 1");
  expect(await buildDist(root)).toMatch(/not rebuilt/);
}, 60_000);

it("builds again after a source edit, even one whose mtime is older than dist/", async () => {
  await put("src/a.ts", "export const a: number = 2;\n");
  await utimes(join(root, "src", "a.ts"), new Date("2001-01-01"), new Date("2001-01-01"));
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  expect(await built()).toContain("a = 2");
}, 60_000);

it("builds again when dist/ changed since its build", async () => {
  await writeFile(join(root, "dist", "src", "a.js"), "export const a = 1;\n");
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  expect(await built()).toContain("a = 2");
}, 60_000);

it("leaves no output of a source that is gone (a moved or deleted file)", async () => {
  await put("src/old.ts", "export const old = 1;\n");
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  expect(existsSync(join(root, "dist", "src", "old.js"))).toBe(true);
  await rm(join(root, "src", "old.ts"));
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  expect(existsSync(join(root, "dist", "src", "old.js"))).toBe(false);
  expect(await built()).toContain("a = 2");
}, 60_000);

it("swaps the new build in whole: dist/ is old, then new, never a partial build", async () => {
  await put("src/a.ts", "export const a: number = 3;\n");
  let done = false;
  const build = buildDist(root).finally(() => (done = true));
  const seen: string[] = [];
  const look = async () => {
    const text = existsSync(join(root, "dist", "src", "a.js")) ? await built().catch(() => "") : "";
    seen.push(/a = 2/.test(text) ? "old" : /a = 3/.test(text) ? "new" : text === "" ? "missing" : text);
  };
  while (!done) {
    await look();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(await build).toMatch(/^dist\/ built/);
  // One look after the build ended: the loop's last may have landed between the swap's renames
  // just before it did (a CI run saw "old,missing" and nothing after).
  await look();
  // dist/ is missing only between the swap's two renames (build-dist.ts swapIn): a poll on a loaded
  // machine may land there, once; it is never a build in part, and never old again after new.
  const phases = seen.filter((state, i) => state !== seen[i - 1]);
  expect(["old", "old,new", "old,missing,new", "new"]).toContain(phases.join(","));
  expect(seen.filter((state) => state === "missing").length).toBeLessThanOrEqual(2);
  expect(await built()).toContain("a = 3");
}, 60_000);

it("writes source maps whose sources are the project's files (built at dist/'s depth)", async () => {
  const compilerOptions = { ...COMPILER_OPTIONS, sourceMap: true };
  await put("tsconfig.json", JSON.stringify({ compilerOptions, include: ["src"] }));
  await put("src/a.ts", "export const a: number = 4;\n");
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  const map = JSON.parse(await readFile(join(root, "dist", "src", "a.js.map"), "utf8")) as {
    sources: string[];
  };
  expect(map.sources.map((source) => join(root, "dist", "src", source))).toEqual([join(root, "src", "a.ts")]);
  expect((await readdir(root)).filter((name) => name.startsWith(".dist-build-"))).toEqual([]);
}, 60_000);

it("ignores type errors (the typecheck's) but fails with tsc's output when it cannot build", async () => {
  await put("src/a.ts", 'export const a: number = "not a number";\n');
  expect(await buildDist(root)).toMatch(/^dist\/ built/);
  await put("src/a.ts", "export const = ;\n");
  await expect(buildDist(root)).rejects.toThrow(/build for the tests failed[\s\S]*src\/a\.ts[\s\S]*error TS/);
  expect(await built()).toContain("not a number"); // the last good build stays
}, 60_000);
