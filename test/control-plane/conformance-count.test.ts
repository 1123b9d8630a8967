import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// docs/control-plane.md "SDK conformance" states how many checks the suite has and how many are
// skipped against the open-source server; counted here from the test files so it stays true.

const dir = join(import.meta.dirname, "../conformance");
const files = readdirSync(dir).filter((name) => name.endsWith("-conformance.test.ts"));

/** An `it(` or `it.skipIf(...)(` followed by the check's title. */
const CHECK = /^\s*it(?:\.skipIf\(.*\))?\(\s*["'`]/gm;

function countChecks() {
  let checks = 0;
  let skippedThere = 0;
  for (const name of files) {
    const text = readFileSync(join(dir, name), "utf8");
    const here = text.match(CHECK)?.length ?? 0;
    checks += here;
    // A describe skipped there skips all its checks; otherwise count the checks skipped one by one.
    skippedThere += /describe\.skipIf\(lacks\(/.test(text)
      ? here
      : (text.match(/^\s*it\.skipIf\(lacks\(/gm)?.length ?? 0);
  }
  return { checks, files: files.length, skippedThere };
}

describe("docs/control-plane.md's conformance count", () => {
  it("states the number of checks, files and checks skipped against the open-source server", () => {
    const docs = readFileSync(join(import.meta.dirname, "../../docs/control-plane.md"), "utf8");
    const stated =
      /The suite has \*\*(\d+) checks\*\* in \*\*(\d+) files\*\*; \*\*(\d+)\*\* are skipped/.exec(docs);
    expect(
      stated,
      "the sentence 'The suite has **N checks** in **M files**; **K** are skipped'",
    ).not.toBeNull();
    const [, checks, fileCount, skipped] = stated!.map(Number);
    expect({ checks, files: fileCount, skippedThere: skipped }).toEqual(countChecks());
  });
});
