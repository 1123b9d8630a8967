import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// Documentation examples run `plumb` from PATH: `npx plumb` outside a checkout of this repository
// fetches an unrelated registry package of that name (plumb is not published).

const root = new URL("../", import.meta.url);
const documents = ["README.md", ...readdirSync(new URL("docs/", root)).map((name) => `docs/${name}`)].filter(
  (name) => name.endsWith(".md"),
);

describe("documentation examples", () => {
  it.each(documents)("%s runs no command as `npx plumb`", (name) => {
    const lines = readFileSync(new URL(name, root), "utf8").split("\n");
    // A command is a line of a code block; prose may warn about npx plumb.
    let inCode = false;
    const offending = lines.filter((line) => {
      if (line.trimStart().startsWith("```")) inCode = !inCode;
      return inCode && /(^|[\s;&|(])npx (-y )?plumb\b/.test(line);
    });
    expect(offending).toEqual([]);
  });
});
