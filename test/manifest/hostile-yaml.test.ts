import { describe, expect, it } from "vitest";
import { MAX_MAPPING_KEYS, MAX_NESTING } from "../../src/manifest/parse/yaml-shape.js";
import { MAX_PROBLEMS_PER_DOCUMENT } from "../../src/manifest/validate.js";
import { brief, check } from "./helpers.js";

// Issue 10, point 4: hostile or odd YAML gets a clear FILE:LINE:COL problem with a code, never
// silence, a runtime warning or a stack overflow.

const HEAD = "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: a\n";
const VALID = `${HEAD}spec:
  source: external_container
  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}
  source_revision_config: {image_uri: "img:1"}
`;

describe("YAML shape", () => {
  it("duplicate keys, in block and flow maps, named in the message", () => {
    expect(brief(check(`${HEAD}  name: b\nspec: {}\n`).problems)).toEqual(["5:3 error duplicate-key"]);
    const flow = check(`${HEAD}spec: {source: gitrepo, source: gitrepo}\n`);
    expect(brief(flow.problems)).toEqual(["5:25 error duplicate-key"]);
    expect(flow.problems[0]!.message).toBe('key "source" appears twice in this mapping');
  });

  it("complex keys are refused (no runtime warning), in explicit and flow form", () => {
    const explicit = check(`${HEAD}  labels:\n    ? [a, b]\n    : c\nspec: {}\n`);
    expect(brief(explicit.problems)).toEqual(["6:7 error complex-key"]);
    const flow = check(`${HEAD}  labels: {[a, b]: c}\nspec: {}\n`);
    expect(brief(flow.problems)).toEqual(["5:12 error complex-key"]);
  });

  it("a binary key is refused too: no 'Keys with collection values' process warning", () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      const binary = check(`${HEAD}  labels:\n    ? !!binary aGVsbG8=\n    : c\nspec: {}\n`);
      expect(brief(binary.problems)).toEqual(["6:16 error complex-key"]);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it(`nesting past ${MAX_NESTING} levels is too-deep, in flow, block and list form`, () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(brief(check(`${HEAD}spec: {x: ${deep(80)}}\n`).problems)).toEqual(["5:73 error too-deep"]);
    expect(check(`${HEAD}spec: {x: ${deep(50)}}\n`).problems.map((p) => p.code)).not.toContain("too-deep");
    // Thousands of levels never reach a recursive parser: refused from the raw text.
    const hopeless = check(`${HEAD}spec:\n  x: ${deep(5000)}\n`);
    expect(hopeless.problems.map((p) => [p.line, p.code, p.message])).toEqual([
      [6, "too-deep", `nested more than ${MAX_NESTING} levels deep; manifests are far shallower`],
    ]);
    expect(brief(check(`${HEAD}spec:\n  x:\n    ${"- ".repeat(3000)}x\n`).problems)).toEqual([
      "7:2005 error too-deep",
    ]);
    // Brackets of both kinds count together (yaml-shape.ts counts them before walking the text).
    const mixed = `${"[".repeat(600)}${"{".repeat(600)}${"}".repeat(600)}${"]".repeat(600)}`;
    expect(brief(check(`${HEAD}spec:\n  x: ${mixed}\n`).problems)).toEqual(["6:1006 error too-deep"]);
    const block = Array.from({ length: 70 }, (_, i) => `${"  ".repeat(i + 1)}k${i}:`).join("\n");
    expect(check(`${HEAD}spec:\n${block} v\n`).problems.map((p) => p.code)).toEqual(["too-deep"]);
  });

  it(`a mapping of more than ${MAX_MAPPING_KEYS} keys is too-many-keys, block or flow, nested or not`, () => {
    const keys = (n: number, indent: string) =>
      Array.from({ length: n }, (_, i) => `${indent}k${i}: v\n`).join("");
    const block = check(`${HEAD}spec:\n  labels:\n${keys(MAX_MAPPING_KEYS + 1, "    ")}`);
    expect(block.problems.map((p) => [p.line, p.column, p.code, p.message])).toEqual([
      [7, 5, "too-many-keys", `a mapping holds more than ${MAX_MAPPING_KEYS} keys; manifests hold far fewer`],
    ]);
    expect(block.manifests).toEqual([]);
    const flowKeys = Array.from({ length: MAX_MAPPING_KEYS + 1 }, (_, i) => `k${i}: v`).join(", ");
    expect(brief(check(`${HEAD}spec: {source: x, labels: [{${flowKeys}}]}\n`).problems)).toEqual([
      "5:28 error too-many-keys",
    ]);
    // At the limit, the keys are read (and each is an unknown field here); a long list is no mapping.
    const atLimit = check(`${HEAD}  labels:\n${keys(MAX_MAPPING_KEYS, "    ")}spec: {}\n`);
    expect(atLimit.problems.map((p) => p.code)).not.toContain("too-many-keys");
    const list = Array.from({ length: MAX_MAPPING_KEYS * 2 }, () => "    - v\n").join("");
    expect(check(`${VALID}  extra:\n${list}`).problems.map((p) => p.code)).not.toContain("too-many-keys");
  });

  it("the shortest text of too many keys is still counted (texts under the limit's length are not walked)", () => {
    // One character and a comma per key: the fewest characters a mapping of that many keys takes.
    const flow = `{${"a,".repeat(MAX_MAPPING_KEYS)}a}\n`;
    expect(brief(check(flow).problems)).toEqual(["1:1 error too-many-keys"]);
    const block = ":\n".repeat(MAX_MAPPING_KEYS + 1);
    expect(brief(check(block).problems)).toEqual(["1:1 error too-many-keys"]);
  });

  it("an alias without its anchor says so (not 'too many aliases')", () => {
    const { problems } = check(`${HEAD.replace("name: a", "name: *nowhere")}spec: {}\n`);
    expect(problems.map((p) => [p.code, p.message])).toEqual([
      ["yaml-unresolved-alias", "alias *nowhere has no anchor &nowhere before it in this document"],
    ]);
  });

  it("an alias without its anchor is reported where the alias is, in a later document too", () => {
    const later = `${VALID}---\n${HEAD.replace("name: a", "name: b")}spec:\n  labels:\n    x: *rev\n`;
    const { problems } = check(later);
    const line = later.split("\n").findIndex((text) => text.includes("*rev")) + 1;
    expect(problems.map((p) => [p.code, `${p.line}:${p.column}`])).toEqual([
      ["yaml-unresolved-alias", `${line}:8`],
    ]);
  });

  it(`shows at most ${MAX_PROBLEMS_PER_DOCUMENT} problems of a document, in order, and counts the rest`, () => {
    const keys = Array.from({ length: 1500 }, (_, i) => `  k${i}: v\n`).join("");
    const { problems } = check(`${VALID}${keys}`);
    expect(problems).toHaveLength(MAX_PROBLEMS_PER_DOCUMENT + 1);
    expect(problems.slice(0, 2).map((p) => p.message)).toEqual([
      'unknown field "k0" in spec',
      'unknown field "k1" in spec',
    ]);
    expect(problems.at(-1)).toMatchObject({
      code: "too-many-problems",
      severity: "warning",
      message: `${1500 - MAX_PROBLEMS_PER_DOCUMENT} more problems in this document are not shown; fix the ones above first`,
    });
  });
});

describe("documents that are almost manifests", () => {
  it("a manifest inside a top-level list is an error, not silence", () => {
    const listed = VALID.split("\n").map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`));
    expect(brief(check(listed.join("\n")).problems)).toEqual(["1:3 error manifest-in-list"]);
    expect(check("- a\n- b\n").problems).toEqual([]); // any other list is not ours
  });

  it("an apiVersion-like key or value that is not exactly plumb/v1 is a not-a-manifest warning", () => {
    const typo = check(VALID.replace("apiVersion", "apiversion"));
    expect(typo.problems.map((p) => [p.line, p.code, p.message])).toEqual([
      [
        1,
        "not-a-manifest",
        'key "apiversion" is not "apiVersion"; this document is skipped (did you mean "apiVersion"?)',
      ],
    ]);
    const near = check(VALID.replace("plumb/v1", "plumbing/v1"));
    expect(near.problems.map((p) => [p.line, p.column, p.message])).toEqual([
      [
        1,
        13,
        'apiVersion "plumbing/v1" is not plumb/v1; this document is skipped (did you mean "plumb/v1"?)',
      ],
    ]);
    expect(check(VALID.replace("plumb/v1", "plumb.dev/v1")).problems.map((p) => p.code)).toEqual([
      "not-a-manifest",
    ]);
    // Another tool's objects often live alongside (examples/kubernetes): they stay quiet.
    expect(check("apiVersion: apps/v1\nkind: Deployment\n").problems).toEqual([]);
    const kindOnly = check("kind: Deployment\nmetadata: {name: a}\n");
    expect(kindOnly.problems.map((p) => p.code)).toEqual(["not-a-manifest"]);
    expect(check(VALID.replace("plumb/v1", "plumb/v2")).problems.map((p) => p.code)).toEqual([
      "unsupported-api-version",
    ]);
    expect(check("name: ci\non: [push]\n").problems).toEqual([]); // other YAML stays quiet
  });
});

describe("values", () => {
  it(".nan and .inf are named as such", () => {
    const spec = VALID.replace(
      "{listener_id: 10000000-0000-4000-8000-000000000001}",
      "{listener_id: 10000000-0000-4000-8000-000000000001, resource_spec: {cpu: .nan, min_scale: .inf, max_scale: 1.5}}",
    );
    const messages = check(spec).problems.map((p) => p.message);
    expect(messages).toContain(
      "spec.source_config.resource_spec.cpu must be a number or null, not not-a-number (.nan)",
    );
    expect(messages).toContain(
      "spec.source_config.resource_spec.min_scale must be an integer or null, not infinity (.inf)",
    );
    expect(messages).toContain(
      "spec.source_config.resource_spec.max_scale must be an integer or null, not the fraction 1.5",
    );
  });

  it("NUL and control characters are refused; names and labels refuse tabs, newlines and bidi overrides", () => {
    const labelled = (value: string) =>
      check(VALID.replace("  name: a\n", `  name: a\n  labels: {team: "${value}"}\n`)).problems;
    expect(brief(labelled("a\\0b"))).toEqual(["5:18 error control-character"]);
    expect(labelled("a\\u0007")[0]!.message).toBe(
      "metadata.labels.team contains the control character U+0007; remove it",
    );
    expect(labelled("a\\tb").map((p) => p.code)).toEqual(["control-character"]);
    expect(labelled("\\u202Eevil").map((p) => p.code)).toEqual(["control-character"]);
    expect(labelled("plain team")).toEqual([]);
    const key = check(VALID.replace("  name: a\n", '  name: a\n  labels: {"te\\x01am": x}\n')).problems;
    expect(key.map((p) => [p.code, p.message])).toEqual([
      [
        "control-character",
        "the key of metadata.labels.te\u0001am contains the control character U+0001; remove it",
      ],
    ]);
    // Elsewhere a tab or newline is ordinary text (a script, a certificate); NUL is not.
    const env = (value: string) =>
      check(
        VALID.replace(
          "source_revision_config:",
          `secrets: [{name: X, value: "${value}"}]\n  source_revision_config:`,
        ),
      ).problems.map((p) => p.code);
    expect(env("line1\\nline2\\tx")).toEqual([]);
    expect(env("a\\0")).toEqual(["control-character"]);
  });
});
