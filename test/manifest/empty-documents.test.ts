import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_EMPTY_DOCUMENTS } from "../../src/manifest/parse/yaml-shape.js";
import { assertBuilt, runCli } from "../support/built-cli.js";
import { brief, check, VALID_DEPLOYMENT } from "./helpers.js";

// yaml's lexer recurses once per empty document in a row (`---` lines with nothing between them):
// a file of some 5,000 overflowed its stack, and plumb said "cannot parse YAML: Maximum call stack
// size exceeded" at 1:1, which names no cause and no fix. Such a run is refused before parsing,
// at its first line; a stack overflow the checks before the parser did not foresee is said as one.

const VALID = VALID_DEPLOYMENT;
const RUN_LINE = VALID.split("\n").length; // the first line after VALID

describe(`more than ${MAX_EMPTY_DOCUMENTS} empty documents in a row`, () => {
  it("are refused before parsing, at the run's first line, however the --- lines are written", () => {
    for (const line of ["---\n", "--- \n", "---\t# nothing\r\n"]) {
      const result = check(`${VALID}${line.repeat(50_000)}`);
      expect(brief(result.problems)).toEqual([`${RUN_LINE}:1 error too-many-empty-documents`]);
      expect(result.problems[0]!.message).toBe(
        `more than ${MAX_EMPTY_DOCUMENTS} empty documents in a row from here (--- lines with nothing between them), more than the YAML parser can read; remove the extra --- lines`,
      );
    }
  });

  it(`${MAX_EMPTY_DOCUMENTS} in a row, or more with something between them, are read as before`, () => {
    const codes = (text: string) => check(text).problems.map((p) => p.code);
    expect(codes(`${VALID}${"---\n".repeat(MAX_EMPTY_DOCUMENTS)}`)).toEqual([]);
    expect(codes(`${VALID}${"---\n\n".repeat(5_000)}`)).toEqual([]);
    expect(codes(`${VALID}${"---\n# note\n".repeat(5_000)}`)).toEqual([]);
  });
});

describe("the built CLI", () => {
  let dir: string;
  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(join(tmpdir(), "plumb-empty-documents-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("names the file and the run, not the engine's stack overflow", async () => {
    const file = join(dir, "many.yaml");
    await writeFile(file, "---\n".repeat(5_000));
    const { code, output } = await runCli(["validate", file], {});
    expect(code).toBe(1);
    expect(output).toContain("many.yaml:1:1: error: more than 1000 empty documents in a row");
    expect(output).toContain("[too-many-empty-documents]");
    expect(output).not.toContain("Maximum call stack size exceeded");
  });

  it("says a stack overflow in the parser is one, with the fix (a small stack: 900 in a row)", async () => {
    const file = join(dir, "nine-hundred.yaml");
    await writeFile(file, "---\n".repeat(900));
    const main = join(process.cwd(), "dist", "src", "cli", "main.js");
    const run = await promisify(execFile)(process.execPath, ["--stack-size=150", main, "validate", file], {
      env: { ...process.env, NO_COLOR: "1" },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const output = `${run.stdout}${run.stderr}`;
    expect("code" in run ? run.code : 0).toBe(1);
    expect(output).toContain(
      "nine-hundred.yaml:1:1: error: the YAML parser ran out of stack on this file (it recurses once per nesting level and per empty document in a row); split the file or simplify it [yaml-too-complex]",
    );
    expect(output).not.toContain("Maximum call stack size exceeded");
  });
});
