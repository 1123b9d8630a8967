import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { tmpdir } from "node:os";
import { expect, it } from "vitest";
import { ISOLATED } from "../../vitest.config.js";
import { runInProcess } from "./in-process-cli.js";

// Most test files share their worker's modules with the files before them (vitest.config.ts,
// isolate: false). A file that changes what the whole process shares must run in a process of its
// own (ISOLATED): left shared, its change reaches whichever files come next in that worker, and
// they fail or pass by the order the files happened to run in.

const PROCESS_WIDE: ReadonlyArray<[RegExp, string]> = [
  [/from "nock"/, "nock patches http and fetch for the whole process"],
  [/vi\.(do)?[mM]ock\(/, "vi.mock replaces a module"],
  [/useFakeTimers|stubGlobal|stubEnv/, "fake timers or stubbed globals"],
  [/process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env/, "writes process.env"],
  [/process\.chdir\(/, "changes the working directory"],
];

/**
 * Helpers whose process-wide changes last one call: runInProcess stubs stdout, stderr and the
 * environment and sets process.exitCode while the CLI runs, and puts every one back before it
 * returns (the test at the end holds it to that). A file calling it shares its worker; it still runs
 * its calls one at a time (not in concurrent tests).
 */
const RESTORED_PER_CALL = new Set(["test/support/in-process-cli.ts"]);

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => relative(process.cwd(), join(e.parentPath, e.name)));
}

/**
 * A test file's text and that of the test helpers it imports, recursively (a helper that imports
 * nock installs it in every file that imports the helper). src/ is not read: it changes no
 * process-wide state on import.
 */
async function withTestImports(file: string, seen = new Set<string>()): Promise<string> {
  if (seen.has(file) || RESTORED_PER_CALL.has(file)) return "";
  seen.add(file);
  const text = await readFile(file, "utf8");
  const helpers = [...text.matchAll(/from "(\.{1,2}\/[^"]+)\.js"/g)]
    .map((m) => join(dirname(file), `${m[1]}.ts`))
    .filter((path) => path.startsWith("test/") && !path.endsWith(".test.ts"));
  const parts = await Promise.all(helpers.map((path) => withTestImports(path, seen).catch(() => "")));
  return [text, ...parts].join("\n");
}

/** ISOLATED holds exact paths and `DIR/**\/*.test.ts` globs only. */
const isIsolated = (file: string) =>
  ISOLATED.some((pattern) =>
    pattern.endsWith("/**/*.test.ts")
      ? file.startsWith(pattern.slice(0, -"**/*.test.ts".length))
      : file === pattern,
  );

it("every test file that changes process-wide state runs isolated", async () => {
  const shared: string[] = [];
  for (const file of await testFiles("test")) {
    if (file === "test/support/isolation.test.ts" || isIsolated(file)) continue;
    const text = await withTestImports(file);
    const why = PROCESS_WIDE.find(([pattern]) => pattern.test(text));
    if (why) shared.push(`${file}: ${why[1]}`);
  }
  expect(shared).toEqual([]);
});

it("recognises each kind of process-wide change", () => {
  const samples = [
    'import nock from "nock";',
    'vi.mock("../x.js")',
    "vi.useFakeTimers()",
    "process.env.PLUMB_API_KEY = 'k'",
    'process.env["X"] = "1"',
    "delete process.env.X",
    "process.chdir(dir)",
  ];
  for (const sample of samples)
    expect(
      PROCESS_WIDE.some(([pattern]) => pattern.test(sample)),
      sample,
    ).toBe(true);
  expect(PROCESS_WIDE.some(([pattern]) => pattern.test("if (process.env.X === 'y') read()"))).toBe(false);
});

it("reads the test helpers a file imports: test/api's helpers bring nock with them", async () => {
  const text = await withTestImports("test/api/control-plane-client.test.ts");
  expect(text).toContain('import nock from "nock"');
  expect(text).toContain("export function useStrictNock");
});

it("runInProcess leaves nothing behind: stdout, stderr, the environment, exitCode, signal listeners", async () => {
  const before = () => ({
    env: { ...process.env },
    stdout: process.stdout.write,
    stderr: process.stderr.write,
    exitCode: process.exitCode,
    listeners: ["SIGINT", "SIGTERM"].map((s) => process.listenerCount(s)),
  });
  const was = before();
  // A command that fails (exit 1, a message on stderr) with variables the process does not have.
  const missing = await runInProcess(["plan", `${tmpdir()}/plumb-isolation-no-such-dir`], {
    PLUMB_API_URL: "http://127.0.0.1:9",
    PLUMB_API_KEY: "k",
    PLUMB_ISOLATION_PROBE: "1",
  });
  expect(missing.code).toBe(1);
  expect(missing.output).toContain("plumb-isolation-no-such-dir");
  expect(before()).toEqual(was);
  expect(process.stdout.write).toBe(was.stdout);
  expect(process.stderr.write).toBe(was.stderr);
});
