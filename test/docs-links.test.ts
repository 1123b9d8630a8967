import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The repository's documents link only to files inside it (they cite the API specification by
// name): every relative Markdown link resolves to an existing path under the repository root.

const root = process.cwd();
const documents = [
  "README.md",
  "examples/README.md",
  ...readdirSync("docs")
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name)),
];

const links = (file: string) =>
  [...readFileSync(file, "utf8").matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!.split("#")[0]!)
    .filter((target) => target !== "" && !/^[a-z]+:/i.test(target));

describe.each(documents)("%s", (file) => {
  it("links only to files inside the repository, and they exist", () => {
    const bad = links(file).filter((target) => {
      const path = resolve(dirname(file), target);
      return relative(root, path).startsWith("..") || !existsSync(path);
    });
    expect(bad).toEqual([]);
  });

  it("names no path outside the repository", () => {
    expect(readFileSync(file, "utf8")).not.toMatch(/\.\.\/shared\//);
  });
});
