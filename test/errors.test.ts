import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, escapeControls, isErrorCode, PlumbError } from "../src/errors.js";

// Every error code is in one list (src/errors.ts), documented with its fix in
// docs/troubleshooting.md "Error codes", and used somewhere: the three stay in step.

const root = new URL("../", import.meta.url);
const docs = readFileSync(new URL("docs/troubleshooting.md", root), "utf8");

/** The codes of the "Error codes" table: the first cell of each row, in backticks. */
function documentedCodes(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf("## Error codes"));
  return [...section.matchAll(/^\| `([a-z-]+)` *\|/gm)].map((match) => match[1]!);
}

describe("error codes", () => {
  it("has one row with a fix in docs/troubleshooting.md for every code, and no row for an unknown one", () => {
    const documented = documentedCodes(docs);
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it("gives every documented code a meaning and a fix", () => {
    const section = docs.slice(docs.indexOf("## Error codes"));
    for (const row of section.split("\n").filter((line) => /^\| `[a-z-]+` *\|/.test(line))) {
      const cells = row.split("|").map((cell) => cell.trim());
      expect(
        cells.slice(2, 4).every((cell) => cell.length > 10),
        row,
      ).toBe(true);
    }
  });

  it("lists only codes the source uses", () => {
    const used = execFileSync(
      "git",
      ["grep", "-h", "-o", "-E", '"[a-z]+(-[a-z]+)*"', "--", "src/", ":!src/errors.ts"],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    const literals = new Set(used.split("\n").map((line) => line.slice(1, -1)));
    expect(ERROR_CODES.filter((code) => !literals.has(code))).toEqual([]);
  });

  it("refuses an unknown code at the type level and tells known codes at run time", () => {
    // @ts-expect-error: codes are a closed union; a new one goes into ERROR_CODES (and the docs)
    const error = new PlumbError("made-up", "message");
    expect(error.code).toBe("made-up");
    expect(isErrorCode("lock-lost")).toBe(true);
    expect(isErrorCode("made-up")).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });

  it("reads the table's first cells and nothing else", () => {
    const sample =
      "## Error codes\n\n| code | means | fix |\n| --- | --- | --- |\n| `a-b` | x | y |\n| plain | x | y |\n";
    expect(documentedCodes(sample)).toEqual(["a-b"]);
  });
});

describe("escapeControls", () => {
  it("writes control characters and the characters that reorder or break a line as escapes", () => {
    expect(escapeControls("a\nb\u001b[31m")).toBe("a\\nb\\u001b[31m");
    // Trojan Source: an override shows the rest of the line reversed; isolates and marks likewise.
    for (const c of [
      "\u202e",
      "\u202a",
      "\u2066",
      "\u2069",
      "\u200e",
      "\u200f",
      "\u061c",
      "\u2028",
      "\u2029",
    ])
      expect(escapeControls(`rev-${c}1`)).toBe(`rev-\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}1`);
    // Other text stays as it is: accents, scripts written right to left, emoji.
    expect(escapeControls("déploiement-عربي-🚀")).toBe("déploiement-عربي-🚀");
  });
});
