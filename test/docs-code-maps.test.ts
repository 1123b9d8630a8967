import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The code maps in docs/ name every file of the folder they describe: a new file gets a line, a
// removed one loses it.

const root = new URL("../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

/** The "## Code map" section of a document, up to the next "## " heading. */
function codeMap(markdown: string): string {
  const start = markdown.indexOf("## Code map");
  if (start === -1) return "";
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

/** The .ts files of a folder and its subfolders, as paths relative to it ("queue/schedule.ts"). */
const filesOf = (folder: string) =>
  readdirSync(new URL(folder, root), { recursive: true, encoding: "utf8" }).filter((name) =>
    name.endsWith(".ts"),
  );

describe.each([
  ["docs/controller.md", "src/controller/"],
  ["docs/apply.md", "src/apply/"],
])("%s", (doc, folder) => {
  const map = codeMap(read(doc));

  it(`names every file of ${folder}`, () => {
    expect(filesOf(folder).filter((file) => !map.includes(`${file}\``))).toEqual([]);
  });

  it("names no file that is gone", () => {
    const paths = [...map.matchAll(/`(src\/[a-z/-]+\.ts)`/g)].map((match) => match[1]!);
    const bare = [...map.matchAll(/`((?!src\/)[a-z-]+(?:\/[a-z-]+)*\.ts)`/g)].map(
      (match) => `${folder}${match[1]!}`,
    );
    expect([...paths, ...bare].filter((path) => !existsSync(new URL(path, root)))).toEqual([]);
  });
});
