import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateCommand } from "../../src/cli/offline/validate.js";
import { parseManifestText } from "../../src/manifest/parse/parse.js";
import { yamlMessage } from "../../src/manifest/parse/yaml-message.js";

// A YAML error or warning never shows the file's text it is about: that text can be a secret's
// value. `yaml`'s messages quote it in places ("Unresolved tag: !Passw0rd" for a password written
// unquoted with a leading !, "Unexpected scalar token in YAML stream: "…"" for a stray line of a
// token file); plumb says what it found and where, never the text (src/manifest/parse/yaml-message.ts).

const MARK = "sk-live-Q7x9";
const head =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  secrets:\n    - name: T\n";

/** Each text puts MARK where one of yaml's messages would quote it. */
const QUOTED_PLACES: Record<string, string> = {
  "a value with a leading ! (a tag)": `${head}      value: !${MARK}\n`,
  "a verbatim tag": `${head}      value: !<${MARK}> x\n`,
  "a tag handle without a suffix": `${head}      value: !${MARK}! x\n`,
  "a block scalar header with more": `${head}      value: |x ${MARK}\n        body\n`,
  "an escape in a double-quoted value": `${head}      value: "\\q${MARK}"\n`,
  "a stray line after a flow document": `[core]\n\ttoken = AUTHORIZATION: basic ${MARK}\n`,
  "a scalar after a flow mapping": `${head}      value: {a: 1} ${MARK}\n`,
  "a tag on a collection of another kind": `${head}      value: !!str\n        ${MARK}: 1\n`,
  "a directive": `%${MARK} x\n---\n${head}      value: x\n`,
  "a YAML version": `%YAML 1.${MARK}\n---\n${head}      value: x\n`,
  "a value after a document end": `${head}      value: x\n... ${MARK}\n`,
  "a flow value cut short": `${head}      value: [${MARK}\n`,
};

describe("a YAML problem's message", () => {
  it.each(Object.entries(QUOTED_PLACES))("does not show the file's text: %s", (_place, text) => {
    const { problems } = parseManifestText(text, "a.yaml");
    const yamlProblems = problems.filter((p) => p.code.startsWith("yaml-"));
    expect(yamlProblems.length, JSON.stringify(problems)).toBeGreaterThan(0);
    for (const problem of problems) expect(problem.message).not.toContain(MARK);
  });

  it("says what it found: an unresolved tag tells to quote the value", () => {
    const { problems } = parseManifestText(QUOTED_PLACES["a value with a leading ! (a tag)"]!, "a.yaml");
    expect(problems.map((p) => [p.line, p.code, p.message])).toContainEqual([
      7,
      "yaml-warning",
      "Unresolved tag (a value that starts with ! is a YAML tag: quote the value)",
    ]);
  });

  it("keeps yaml's words where they quote nothing", () => {
    expect(yamlMessage('Missing closing "quote')).toBe('Missing closing "quote');
    expect(yamlMessage('Unexpected scalar token in YAML stream: "basic x"\n\nat line 2')).toBe(
      "Unexpected scalar token in YAML stream",
    );
    expect(yamlMessage("Implicit map keys need to be followed by map values")).toBe(
      "Implicit map keys need to be followed by map values",
    );
  });
});

describe("plumb validate", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("prints none of those texts in its text, JSON, GitHub or SARIF output", async () => {
    const dir = await mkdtemp(join(tmpdir(), "plumb-yaml-message-"));
    dirs.push(dir);
    let n = 0;
    for (const text of Object.values(QUOTED_PLACES)) await writeFile(join(dir, `m${n++}.yaml`), text);
    for (const output of ["text", "json", "github", "sarif"]) {
      let out = "";
      process.exitCode = 0;
      await validateCommand({ write: (t: string) => (out += t) }).parseAsync([dir, "--output", output], {
        from: "user",
      });
      process.exitCode = 0;
      expect(out).toContain("m0.yaml");
      expect(out).not.toContain(MARK);
    }
  });
});
