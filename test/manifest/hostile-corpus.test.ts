import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/load.js";

// The hostile-manifest corpus (issue 10): 129 mutations of an ordinary manifest, each with the line
// and code plumb must report, written by hand in test/fixtures/hostile-manifests/generate.py.
// Loading never throws, every problem has a position, and a document with an error is not returned.

const DIR = join(process.cwd(), "test", "fixtures", "hostile-manifests");
const expected = JSON.parse(readFileSync(join(DIR, "expected.json"), "utf8")) as Record<
  string,
  { line: number; code: string }
>;

describe("hostile manifest corpus", () => {
  it("holds at least 100 cases", () => {
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(100);
  });

  it.each(Object.entries(expected))("%s", async (file, want) => {
    const { manifests, problems } = await loadManifests(join(DIR, file));
    const found = problems.map((p) => `${p.line} ${p.code}`);
    expect(found).toContain(`${want.line} ${want.code}`);
    for (const p of problems) {
      expect(p.file).toBe(file);
      expect(p.line).toBeGreaterThanOrEqual(1);
      expect(p.column).toBeGreaterThanOrEqual(1);
      expect(p.message.length).toBeGreaterThan(0);
    }
    // A document with an error is never returned (plan and apply refuse while any error exists).
    const singleDocument = !/\n(---|\.\.\.)/.test(readFileSync(join(DIR, file), "latin1"));
    if (singleDocument && problems.some((p) => p.severity === "error")) expect(manifests).toEqual([]);
  });
});
