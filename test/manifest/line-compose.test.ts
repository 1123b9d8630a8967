import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { composePlainText } from "../../src/manifest/parse/compose/line-compose.js";
import { parseManifestText } from "../../src/manifest/parse/parse.js";
import { lexerStallAt } from "../../src/manifest/parse/yaml-shape.js";
import { checkProtoKeys } from "../../src/manifest/rules/proto-key-rules.js";
import { checkTextCharacters } from "../../src/manifest/rules/text-rules.js";
import type { Problem } from "../../src/manifest/types.js";
import { editedManifests } from "./cst-corpus.js";
import {
  canonical,
  type Read,
  REPOSITORY as ROOT,
  REPOSITORY_YAML_FILES as FILES,
  viaYaml,
} from "./yaml-reading.js";

// The plain-text reader (src/manifest/parse/line-compose.ts) against yaml: for every text it
// takes, yaml must report no error, no warning and no shape problem, and give the same value (key
// order, -0, NaN included) and the same document start. Texts it leaves alone go the usual way
// (cst-compose.test.ts holds that one). Over every YAML file under test/ and examples/, texts at
// the edges of its subset, and edited manifests (cst-corpus.ts): 2,000 in npm test;
// CST_CORPUS=20000 for the full run (docs/manifests.md "Speed").

const CORPUS = Number(process.env.CST_CORPUS ?? 2000);

/** The plain reader's reading, or undefined when it leaves the text alone. */
function viaPlain(text: string): Read | undefined {
  return composePlainText(text)?.map(({ value, start }) => {
    const before = text.slice(0, start).split("\n");
    return { value: canonical(value), line: before.length, column: before.at(-1)!.length + 1 };
  });
}

/**
 * What checkTextCharacters and checkProtoKeys find in a text the plain reader took: nothing, or
 * validate.ts could not skip them for its documents (ParsedDocument.plainText).
 */
function rulesSkipped(text: string): Problem[] {
  const at = { file: "f", line: 1, column: 1 };
  return (composePlainText(text) ?? []).flatMap(({ value }) => {
    const doc = { file: "f", index: 0, value: value as Record<string, unknown> };
    const located = { ...doc, locators: { key: () => at, value: () => at, start: at } };
    return [...checkTextCharacters(located), ...checkProtoKeys(located)];
  });
}

/** Every text the two disagree on, with what they said; and how many the plain reader took. */
function compare(texts: readonly string[]): { disagreements: string[]; taken: number } {
  const disagreements: string[] = [];
  let taken = 0;
  for (const text of texts) {
    if (lexerStallAt(text) !== undefined) continue;
    const plain = viaPlain(text);
    if (!plain) continue;
    taken++;
    const found = rulesSkipped(text);
    if (found.length > 0) disagreements.push(`${JSON.stringify(text.slice(0, 2000))}\n ${found[0]!.message}`);
    const slow = viaYaml(text);
    const said =
      typeof slow === "string"
        ? `yaml reports "${slow}", the plain reader took the text`
        : JSON.stringify(plain) === JSON.stringify(slow)
          ? undefined
          : `plain ${JSON.stringify(plain)}\n yaml ${JSON.stringify(slow)}`;
    if (said) disagreements.push(`${JSON.stringify(text.slice(0, 2000))}\n ${said}`);
  }
  return { disagreements: disagreements.slice(0, 5), taken };
}

const repoTexts = FILES.map((file) => readFileSync(join(ROOT, file), "utf8"));

/** Texts at the edges of the subset: each either read as yaml reads it or left alone. */
const EDGES = [
  "a: 1\n",
  "\n\nkind: X\n",
  "a: 1\nkind: Deployment\n",
  "a:\n- 1\n- 2\nb: 3\n",
  "a:\n  - 1\n  -\n  - - 2\n",
  "a:\n  -\n    b: 1\n  - c: 2\n    d: [x, {e: f}]\n  - g: \n",
  "- a: 1\n  b:\n  - x\n",
  "a:\n  b: 1\n c: 2\n",
  "a:\n    b: 1\n  c: 2\n",
  "a: 1\n  b: 2\n",
  "a: x\n  y\n",
  "a: - b\n",
  "a: -b\nc: -1\nd: -.inf\ne: -\n",
  "a: b: c\n",
  "a: b:\n",
  "a: b :c\n",
  "a: http://x:80/y?z=1&w\n",
  "a: x, [y] {z}\n",
  "a: {b: [c, {d: e}], f: }\n",
  "a: {b: [c, {d: e}], f: g}\n",
  "a: {b:c}\n",
  "a: {b: c,}\n",
  "a: [b, c,]\n",
  "a: [, b]\n",
  "a: [b: c]\n",
  "a: [b, c] d\n",
  "a: {b: 1, b: 2}\n",
  "a: 1\nb: 2\na: 3\n",
  "a: []\nb: {}\nc: [ ]\nd: { }\n",
  "a: [x\n  y]\n",
  "a: 'it''s'\nb: \"q\"\nc: ''\nd: \"\"\n",
  "a: 'it's'\n",
  'a: "x\\ty"\n',
  'a: "x" y\n',
  'a: "x\n  y"\n',
  "null: 1\n",
  "True: 1\n",
  "Null: x\nn: y\n",
  "__proto__: {polluted: true}\n",
  "constructor: x\ntoString: y\n",
  "a: {__proto__: 1}\n",
  "a: 0x1F\nb: 0o7\nc: 1_024\nd: 1e3\ne: .5\nf: -0\ng: .NaN\nh: ~\ni: TRUE\nj: 1.0.1\n",
  "a:   spaced   out   \nb:\n",
  "a: ?x\n",
  "a: *x\n",
  "a: &x 1\n",
  "a: !t 1\n",
  "a: |\n  x\n",
  "a: >\n  x\n",
  "a: %x\n",
  "a: @x\n",
  "a: `x\n",
  "a: :x\n",
  "---\na: 1\n",
  "a: 1\n---\nb: 2\n",
  "a: 1\n...\n",
  "key : value\n",
  "a b: c\n",
  "'a': b\n",
  "- a\n- b\n",
  "  a: 1\n  b: 2\n",
  "a: 1 # c\n",
  "# head\nkind: X # the kind\na: # empty\n  # inside\n  b: x#y # c: d\n# low\n  c: 'q' # after\nd: [x, y] # flow\n",
  "a:\n  - # c\n    b: 1\n  - x # c\n      # deeper\n  - {c: d}   #\n",
  "a: x\n  # c\nb: y\n",
  "a: x\n  # c\n  y\n",
  "a: {b: c # d\n  }\n",
  "a: [b, # c\n  d]\n",
  "a: [b,c]# d\n",
  "a: 'b'# c\n",
  "a:# c\n",
  "a: #\n",
  "-# c\n",
  "---\nkind: X\n",
  "--- # c\n# d\nkind: X\na: 1\n",
  "---\n---\nkind: X\n",
  "--- a: 1\n",
  "---a: 1\n",
  "----\na: 1\n",
  "# only\n",
  "a: 1\n---\n",
  "a:\tb\n",
  "a: 1\r\n",
  "a: é\n",
  `${"k".repeat(1030)}: 1\n`,
  `a: ${"x".repeat(1100)}\nb: 1\n`,
  "a.b/c-d_e: 1\n_x: 2\n",
  "a:\n  b:\n    c:\n      d: [[[[1]]]]\n",
  `a: ${"[".repeat(70)}${"]".repeat(70)}\n`,
  "a:\nb:\n  c:\n",
];

describe("the plain-text reader reads texts as yaml does, or leaves them alone", () => {
  it("texts at the edges of its subset", () => {
    const { disagreements, taken } = compare(EDGES);
    expect(disagreements).toEqual([]);
    expect(taken).toBeGreaterThan(15);
  });

  it("every YAML file under test/ and examples/", () => {
    const { disagreements, taken } = compare(repoTexts);
    expect(disagreements).toEqual([]);
    expect(taken).toBeGreaterThan(10);
  });

  it(`${CORPUS} edited manifests`, () => {
    const texts = editedManifests(
      CORPUS,
      repoTexts.filter((text) => text.length < 4096),
    );
    const { disagreements, taken } = compare(texts);
    expect(disagreements).toEqual([]);
    expect(taken).toBeGreaterThan(CORPUS / 10);
  });

  it("reads the bench's manifests", () => {
    const bench = readFileSync(join(ROOT, "bench", "validate.bench.ts"), "utf8");
    const shapes = [...bench.matchAll(/return `(apiVersion[^`]*)`/g)].map((m) =>
      m[1]!.replaceAll("${name}", "agent-1").replace(/\$\{[^}]*\}/g, "1"),
    );
    expect(shapes).toHaveLength(2);
    const { disagreements, taken } = compare(shapes);
    expect(disagreements).toEqual([]);
    expect(taken).toBe(2);
  });

  it("marks what it read, and only that, as plain text: validate.ts skips the character and __proto__ rules", () => {
    const file = "f.yaml";
    const plain = parseManifestText("apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\n", file);
    expect(plain.documents.map((d) => d.plainText)).toEqual([true]);
    // A control character by escape, and a __proto__ key: read the usual way, and found.
    for (const text of [
      'apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: "a\\x01"}\n',
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a, labels: {__proto__: x}}\n",
    ]) {
      const { documents } = parseManifestText(text, file);
      expect(documents.map((d) => d.plainText)).toEqual([undefined]);
      expect([...checkTextCharacters(documents[0]!), ...checkProtoKeys(documents[0]!)]).toHaveLength(1);
    }
  });
});
