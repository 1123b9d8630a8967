import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LineCounter, Parser } from "yaml";
import { composeDocuments } from "../../src/manifest/parse/compose/cst-compose.js";
import { parseManifestText } from "../../src/manifest/parse/parse.js";
import { lexerStallAt } from "../../src/manifest/parse/yaml-shape.js";
import { editedManifests } from "./cst-corpus.js";
import {
  canonical,
  type Read,
  REPOSITORY as ROOT,
  REPOSITORY_YAML_FILES as FILES,
  viaYaml,
} from "./yaml-reading.js";

// The fast composer (src/manifest/parse/cst-compose.ts) against yaml's: for every text it takes,
// yaml's composer must report no error, no warning and no shape problem, and give the same values
// (key order, -0, NaN included) and the same document starts. Texts it leaves to yaml need no
// check: they go the way every text went before. Over every YAML file under test/ and examples/,
// and edited manifests (cst-corpus.ts): 1,000 in npm test (about a second); CST_CORPUS=20000 for
// the full run (docs/manifests.md "Speed").

const CORPUS = Number(process.env.CST_CORPUS ?? 1000);

/** The fast composer's reading, or undefined when it leaves the text to yaml. */
function viaFast(text: string): Read | undefined {
  const lineCounter = new LineCounter();
  const composed = composeDocuments(new Parser(lineCounter.addNewLine).parse(text));
  return composed?.map(({ value, start }) => {
    const { line, col } = lineCounter.linePos(start);
    return { value: canonical(value), line, column: col };
  });
}

/** How the two disagree on `text` (undefined: they agree, or the fast composer left it to yaml). */
function disagreement(text: string, fast = viaFast(text)): string | undefined {
  if (!fast) return undefined;
  const slow = viaYaml(text);
  if (typeof slow === "string") return `yaml reports "${slow}", the fast composer took the text`;
  const a = JSON.stringify(fast);
  const b = JSON.stringify(slow);
  if (a === b) return undefined;
  let at = 0;
  while (a[at] === b[at]) at++;
  return `from character ${at} of the readings: fast …${a.slice(at - 40, at + 40)}… yaml …${b.slice(at - 40, at + 40)}…`;
}

/** Every text the two disagree on, with what they said; and how many the fast composer took. */
function compare(texts: readonly string[]): { disagreements: string[]; fast: number } {
  const disagreements: string[] = [];
  let fast = 0;
  for (const text of texts) {
    // Refused before parsing (yaml's lexer would loop forever: lexer-stall.e2e.test.ts).
    if (lexerStallAt(text) !== undefined) continue;
    const read = viaFast(text);
    const said = disagreement(text, read);
    if (said)
      disagreements.push(`${JSON.stringify(text.length > 2000 ? text.slice(0, 2000) : text)}\n ${said}`);
    if (read) fast++;
  }
  return { disagreements: disagreements.slice(0, 5), fast };
}

const repoTexts = FILES.map((file) => readFileSync(join(ROOT, file), "utf8"));

/** Texts at the edges of what the fast composer takes. */
const EDGES = [
  "",
  "# only a comment\n",
  "---\n",
  "---\n---\n",
  "a: 1\n---\n",
  "a: 1\n...\n",
  "\ufeffa: 1\n",
  "a: 1\r\nb: [x, y]\r\n",
  "key   : value\n",
  "a:\n  - 1\n  -\n  - - 2\n",
  "a: {b: [c, {d: e}], f: }\n",
  "a: [x,\n  y]\n",
  "a: [x, y,]\n",
  "a: [, x]\n",
  "a: {x: 1, x: 2}\n",
  "a: 1\nb: 2\na: 3\n",
  "1: a\n'1': b\n",
  "__proto__: {polluted: true}\nconstructor: x\n",
  "<<: {a: 1}\n",
  "a: &x 1\nb: *x\n",
  "? a\n: b\n",
  "a: !!str 1\n",
  "%YAML 1.1\n---\na: yes\n",
  "a:\tb\n",
  "a: |\n  x\n   y\n\n  z\nb: >+\n  folded\n  line\n\n",
  "a: |-\n\n  x\n",
  "- |\nx\n",
  "a: 'it''s\n  folded'\nb: \"x\\\n  y\"\n",
  'a: "\\x4"\n',
  "a: b: c\n",
  "a:\n- 1\n- 2\n",
  `a: ${"x".repeat(1100)}\nb: 1\n`,
  `${"k".repeat(1030)}: 1\n`,
  "[a, b]\n",
  "plain text\n",
  "kind: Deployment\napiVersion: plumb/v1\n",
];

describe("the fast composer reads texts as yaml does, or leaves them to yaml", () => {
  it("texts at the edges: CRLF, a BOM, empty documents, repeated keys, tags, anchors, tabs", () => {
    const { disagreements, fast } = compare(EDGES);
    expect(disagreements).toEqual([]);
    expect(fast).toBeGreaterThan(EDGES.length / 3);
  });

  it("every YAML file under test/ and examples/", () => {
    const { disagreements, fast } = compare(repoTexts);
    expect(disagreements).toEqual([]);
    // Most of them are plain manifests: the fast path is the one they take.
    expect(fast).toBeGreaterThan(FILES.length / 2);
  });

  it(`${CORPUS} edited manifests`, () => {
    const texts = editedManifests(
      CORPUS,
      repoTexts.filter((text) => text.length < 4096),
    );
    const { disagreements, fast } = compare(texts);
    expect(disagreements).toEqual([]);
    // Both paths are exercised: edits the fast composer reads, and edits it leaves to yaml.
    expect(fast).toBeGreaterThan(CORPUS / 4);
    expect(fast).toBeLessThan(CORPUS);
  });

  it("parseManifestText gives the same documents, starts and problems either way", () => {
    const summary = (text: string, file: string, yamlOnly: boolean) => {
      const { documents, problems } = parseManifestText(text, file, yamlOnly);
      const docs = documents.map((d) => [
        d.index,
        canonical(d.value),
        d.locators.start,
        d.locators.key(["kind"]),
      ]);
      return { docs, problems };
    };
    for (const [i, text] of [...repoTexts, ...EDGES, ...editedManifests(200)].entries()) {
      const file = FILES[i] ?? `edited-${i}.yaml`;
      expect(summary(text, file, false), file).toEqual(summary(text, file, true));
    }
  });
});
