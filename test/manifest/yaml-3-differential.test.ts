import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as current from "yaml";
import * as previous from "yaml-2";
import { hopelessNestingAt } from "../../src/manifest/parse/yaml-shape.js";

// plumb reads YAML with `yaml` 3.0.0-2, a pre-release pinned exactly (docs/manifests.md "Speed").
// This test holds it to what the last stable release, 2.9.1 (a dev dependency only), says about
// the same texts: every YAML file of the repository and seeded edits of each. Per document: both
// report errors, or neither does and both give the same value. Keys that are collections (a list
// or mapping as a key) are the one known difference (the text JavaScript makes of them); plumb
// refuses such keys either way (complex-key). Texts nested past the depth plumb refuses before
// parsing are not compared.

const ROOT = join(import.meta.dirname, "..", "..");
const files = execFileSync("git", ["ls-files", "*.yaml", "*.yml"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter(Boolean);

type Document = { errors: unknown[]; toJS(options: { maxAliasCount: number }): unknown };
type Parser = { parseAllDocuments(text: string, options: { prettyErrors: false }): unknown };
/** Per document: "error", or its value as JSON ("throws" when the value cannot be built). */
function verdicts(yaml: Parser, text: string): string[] {
  const docs = yaml.parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) return [];
  return (docs as Document[]).map((doc) => {
    if (doc.errors.length > 0) return "error";
    try {
      return JSON.stringify(doc.toJS({ maxAliasCount: 100 }));
    } catch {
      return "throws";
    }
  });
}

/** A collection used as a key, which JavaScript objects cannot hold: skipped, see above. */
const COLLECTION_KEY = /"[{[][^"]*[}\]]":/;

const TOKENS = [
  ":",
  " ",
  "\n",
  "-",
  "{",
  "}",
  "[",
  "]",
  ",",
  "'",
  '"',
  "#",
  "&a ",
  "*a",
  "!!str ",
  "? ",
  "|",
  ">",
  "\t",
  "x",
];

/** `count` edits of `text`, the same ones every run: a deletion, an insertion or a repeated slice. */
function edits(text: string, count: number, seed: number): string[] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
  return Array.from({ length: count }, () => {
    const at = next(text.length + 1);
    const kind = next(3);
    if (kind === 0) return text.slice(0, at) + text.slice(at + 1);
    if (kind === 1) return text.slice(0, at) + TOKENS[next(TOKENS.length)]! + text.slice(at);
    return text.slice(0, at) + text.slice(at, at + 30) + text.slice(at);
  });
}

describe("yaml 3.0.0-2 against 2.9.1", () => {
  it("the same verdict and the same values for the repository's YAML files and edits of them", () => {
    expect(files.length).toBeGreaterThan(100);
    const onWarning = () => undefined; // 2.9.1 warns on collection keys; both are compared anyway
    process.on("warning", onWarning);
    let compared = 0;
    const differences: string[] = [];
    try {
      files.forEach((file, i) => {
        const text = readFileSync(join(ROOT, file), "utf8");
        for (const [k, variant] of [text, ...edits(text, 8, i + 1)].entries()) {
          // Refused from the raw text before any parser runs (too-deep); how deep each version's
          // recursion gets before it gives up depends on the stack, which differs by Node version.
          if (hopelessNestingAt(variant) !== undefined) continue;
          const before = verdicts(previous, variant);
          const after = verdicts(current, variant);
          compared++;
          const same = before.length === after.length && before.every((v, d) => v === after[d]);
          if (!same && !before.some((v) => COLLECTION_KEY.test(v))) differences.push(`${file} edit ${k}`);
        }
      });
    } finally {
      process.off("warning", onWarning);
    }
    expect(compared).toBeGreaterThan(1000);
    expect(differences).toEqual([]);
  }, 60_000);

  it("the one known difference is real: a collection key reads differently", () => {
    const text = "labels: {[a, b]: c}\n";
    const onWarning = () => undefined;
    process.on("warning", onWarning);
    try {
      expect(verdicts(previous, text)).toEqual(['{"labels":{"[ a, b ]":"c"}}']);
      expect(verdicts(current, text)[0]).toMatch(COLLECTION_KEY);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
