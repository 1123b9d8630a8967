import { describe, expect, it } from "vitest";
import {
  decodeManifestBytes,
  MAX_MANIFEST_BYTES,
  parseManifestText,
  parseWithPositions,
} from "../../src/manifest/parse/parse.js";
import { brief, check } from "./helpers.js";
import { withCpuTime } from "../support/cpu-time.js";

const OK =
  "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata: {name: acme}\nspec: {invites_enabled: true}\n";

describe("hostile and odd input", () => {
  it("a YAML syntax error points at the problem", () => {
    const { problems } = check("apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: [x\n");
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.code === "yaml-syntax" && p.severity === "error")).toBe(true);
    expect(problems[0]!.line).toBeGreaterThanOrEqual(3);
  });

  it("duplicate keys", () => {
    const { problems, manifests } = check(OK.replace("kind:", "apiVersion: plumb/v1\nkind:"));
    expect(brief(problems)).toEqual(["2:1 error duplicate-key"]);
    expect(manifests).toEqual([]);
  });

  it("an alias bomb is refused quickly", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      lines.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    const text = `apiVersion: plumb/v1\nkind: Deployment\n${lines.join("\n")}\n`;
    const {
      result: { problems },
      cpuMs,
    } = withCpuTime(() => check(text));
    expect(cpuMs).toBeLessThan(2000);
    expect(brief(problems)).toEqual(["2:1 error yaml-alias-limit"]);
  });

  it("a few aliases are fine", () => {
    const text = OK.replace("metadata: {name: acme}", "metadata: {name: &n acme, labels: {owner: *n}}");
    expect(check(text).problems).toEqual([]);
  });

  it("deep nesting does not crash", () => {
    const depth = 50_000;
    const { problems } = check(
      `apiVersion: plumb/v1\nkind: Deployment\nspec: ${"[".repeat(depth)}${"]".repeat(depth)}\n`,
    );
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.severity === "error")).toBe(true);
  });

  it("an empty file is a warning, and so is a comment-only file (emptied-rules.ts)", () => {
    expect(brief(check("  \n\n").problems)).toEqual(["1:1 warning empty-file"]);
    expect(brief(check("# nothing here\n").problems)).toEqual(["1:1 warning no-documents"]);
  });

  it("non-plumb documents are skipped, plumb ones in the same file are checked", () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nfoo: bar\n---\n- a list\n---\njust text\n---\n${OK}`;
    const { problems, manifests } = check(text);
    expect(problems).toEqual([]);
    expect(manifests).toHaveLength(1);
    expect(manifests[0]!.location.line).toBe(10);
  });

  it("another plumb apiVersion is an error", () => {
    expect(brief(check(OK.replace("plumb/v1", "plumb/v2")).problems)).toEqual([
      "1:13 error unsupported-api-version",
    ]);
  });

  it("non-UTF-8 bytes and oversized files", () => {
    const bad = decodeManifestBytes(new Uint8Array([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]), "x.yaml");
    expect(bad).toMatchObject({ problem: { code: "invalid-encoding", line: 1, column: 1 } });
    const big = decodeManifestBytes(new Uint8Array(MAX_MANIFEST_BYTES + 1), "x.yaml");
    expect(big).toMatchObject({ problem: { code: "manifest-too-large" } });
    const bom = decodeManifestBytes(new TextEncoder().encode(`\uFEFF${OK}`), "x.yaml");
    expect("text" in bom && check(bom.text).manifests).toHaveLength(1);
  });

  it("a top-level scalar or list is not a manifest", () => {
    expect(check("42\n").problems).toEqual([]);
  });
});

describe("one YAML parser (yaml, YAML 1.2 core schema)", () => {
  // js-yaml read the common case until issue 28: these are files it read differently from yaml (a
  // file's meaning changed when an anchor anywhere sent it down the other parser's path).
  const deployment = (extra: string) =>
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: a\n  labels: {${extra}}\nspec: {source: gitrepo}\n`;
  it.each([
    ["1_024", "1_024"],
    ["-0x1F", "-0x1F"],
    ["0b101", "0b101"],
  ])(
    "%s is the string %s, not a number (YAML 1.2 core has no underscores, signed hex or 0b)",
    (text, value) => {
      const [doc] = parseManifestText(deployment(`n: ${text}`), "x.yaml").documents;
      expect((doc?.value.metadata as { labels: Record<string, unknown> }).labels.n).toBe(value);
    },
  );

  it("a quoted string that runs onto the next line inside a flow mapping is a syntax error", () => {
    const { documents, problems } = parseManifestText(deployment('team: "x\nc"'), "x.yaml");
    expect(documents).toEqual([]);
    expect(problems.map((p) => p.code)).toContain("yaml-syntax");
  });

  it("positions read again on demand equal the ones of the first parse", () => {
    const text = `# c\n---\napiVersion: v1\nkind: X\n---\n${deployment("n: 0x1F, b: true, z: ~, f: .inf")}...\n`;
    const [lazy] = parseManifestText(text, "x.yaml").documents;
    const [, eager] = parseWithPositions(text, "x.yaml", true).documents;
    for (const path of [["metadata", "labels", "b"], ["spec", "source"], ["nope"]]) {
      expect(lazy?.locators.key(path)).toEqual(eager?.locators.key(path));
      expect(lazy?.locators.value(path)).toEqual(eager?.locators.value(path));
    }
    expect(lazy?.locators.start).toEqual({ file: "x.yaml", line: 7, column: 1 });
    expect(lazy?.locators.value(["metadata", "labels", "b"])).toEqual({
      file: "x.yaml",
      line: 10,
      column: 24,
    });
  });
});
