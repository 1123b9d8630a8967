import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { lexerStallAt } from "../../src/manifest/parse/yaml-shape.js";
import { assertBuilt } from "../support/built-cli.js";

// yaml 3.0.0-2's lexer loops forever at a lone CR, U+2028 or U+2029 that ends a blank, comment or
// directive line before a document (found by the edited manifests of cst-compose.test.ts):
// `plumb validate` of such a file never returned, and the controller's loader with it. The built
// CLI is run as a child with a deadline, so a hang fails the test instead of stopping the run.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
const BODY = "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {}\n";

/** Texts that hung, and where each is refused (line:column). */
const STALLS: Array<[string, string]> = [
  [`# pasted comment\u2028\n${BODY}`, "1:17"],
  [`# old Mac line ends\r${BODY.replace(/\n/g, "\r")}`, "1:20"],
  [`\r${BODY}`, "1:1"],
  [`%YAML 1.2\r---\n${BODY}`, "1:10"],
  [`${BODY}...\n\u2029${BODY}`, "6:1"],
];

/** What `plumb validate` prints for a directory holding `text` as a.yaml. */
async function validate(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-stall-"));
  try {
    await writeFile(join(dir, "a.yaml"), text);
    const { stdout } = await promisify(execFile)(process.execPath, [MAIN, "validate", dir], {
      timeout: 15_000,
    });
    return stdout;
  } catch (error) {
    const { killed, stdout } = error as { killed?: boolean; stdout?: string };
    if (killed) throw new Error("plumb validate did not return within 15 s", { cause: error });
    return stdout ?? "";
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("a line end yaml's lexer cannot step over", () => {
  it.each(STALLS)("is refused where it stands, not read forever: %j", async (text, at) => {
    assertBuilt();
    const output = await validate(text);
    expect(output).toContain(`a.yaml:${at}: error:`);
    expect(output).toContain("[yaml-line-break]");
  });

  it("a lone CR, U+2028 or U+2029 after a document's first line is still read, as is CRLF", () => {
    expect(lexerStallAt(`${BODY}  labels: {a: "x\ry"}\n# a\u2028b\n`)).toBeUndefined();
    expect(lexerStallAt(`a: 1\r\n# CRLF\r\nb: 2\r\n`)).toBeUndefined();
    expect(lexerStallAt(`# CRLF\r\n${BODY}`)).toBeUndefined();
  });
});
