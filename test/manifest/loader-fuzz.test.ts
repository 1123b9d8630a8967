import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { check } from "./helpers.js";

// Fuzzing the loader (issue 10): whatever the text, parsing and validation return problems, never
// throw, and every problem has a position inside the file and a code.

const BASE = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: fuzz
  labels: {team: core}
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec: {cpu: 0.5, min_scale: 1}
  source_revision_config: {image_uri: "img:1"}
  secrets:
    - name: TOKEN
      valueFrom: {env: TOKEN}
`;

// Characters that matter to YAML, plus control characters, quotes and non-ASCII.
const yamlChar = fc.constantFrom(
  ..."{}[]:,-?&*!|>'\"%@`#\n\t \\.0123456789abcxyz~\u0000\u0007\u0085\u202e\ufeffé🙂".split(""),
  "\r\n",
  "---\n",
  "...\n",
  ".nan",
  "<<: ",
  "&a ",
  "*a",
  "!!binary ",
);

/** The base manifest with random edits: insertions, deletions and replacements at random offsets. */
const mutated = fc
  .array(fc.record({ at: fc.nat(BASE.length), cut: fc.nat(6), text: fc.array(yamlChar, { maxLength: 8 }) }), {
    minLength: 1,
    maxLength: 6,
  })
  .map((edits) =>
    edits.reduce((text, { at, cut, text: insert }) => {
      const i = Math.min(at, text.length);
      return text.slice(0, i) + insert.join("") + text.slice(i + cut);
    }, BASE),
  );

const assertProblemsPositioned = (text: string) => {
  const { problems } = check(text, "fuzz.yaml");
  const lines = text.split(/\r\n|\r|\n/).length + 1;
  for (const p of problems) {
    expect(p.file).toBe("fuzz.yaml");
    expect(p.code).toMatch(/^[a-z][a-z0-9-]+$/);
    expect(p.line).toBeGreaterThanOrEqual(1);
    expect(p.line).toBeLessThanOrEqual(lines);
    expect(p.column).toBeGreaterThanOrEqual(1);
  }
};

describe("loader fuzz", () => {
  it("mutated manifests: no exception, every problem positioned", () => {
    fc.assert(fc.property(mutated, assertProblemsPositioned), { numRuns: 400 });
  });

  it("arbitrary YAML-ish text: no exception, every problem positioned", () => {
    fc.assert(
      fc.property(
        fc.array(yamlChar, { maxLength: 200 }).map((chars) => chars.join("")),
        assertProblemsPositioned,
      ),
      { numRuns: 400 },
    );
  });

  it("any JSON value as a manifest (JSON is YAML): no exception, every problem positioned", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const doc = { apiVersion: "plumb/v1", kind: "Deployment", metadata: { name: "j" }, spec: value };
        assertProblemsPositioned(JSON.stringify(doc));
      }),
      { numRuns: 300 },
    );
  });
});
