import { afterEach, describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { editValues } from "../../../src/manifest/write/edit-values.js";

// drift --write writes a live string as it reads back: quoted when plain YAML would read it as
// something else (a number, a list, a mapping), and without the yaml package's warning about
// collection keys on stderr for a value like "[WIP]: new agent".

const TEXT =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  description: old # kept\n";
const edit = (value: string) =>
  editValues(TEXT, [{ kind: "Deployment", name: "a", path: ["spec", "description"], value }]).text;

const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(warning.message);
afterEach(() => {
  process.off("warning", onWarning);
  warnings.length = 0;
});

describe("a written string reads back as itself", () => {
  it.each(["[WIP]: new agent", "{a: b}: c", "? x", "12", "true", "a: b", "plain words", "- item"])(
    "%s",
    async (value) => {
      process.on("warning", onWarning);
      const text = edit(value);
      expect(
        (parse(text, { logLevel: "error" }) as { spec: { description: unknown } }).spec.description,
      ).toBe(value);
      expect(text).toContain("# kept");
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
      expect(warnings).toEqual([]);
    },
  );
});

// A live value with a line break was written as a double-quoted scalar folded over several lines,
// indented as its key: the file no longer parsed ("Missing closing quote") and plan refused it.
const NESTED =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source_revision_config:\n    image_uri: a:1 # kept\n  verify:\n    cases:\n      - input: 'old'\n";
const nestedEdit = (path: (string | number)[], value: string) =>
  editValues(NESTED, [{ kind: "Deployment", name: "a", path, value }]);

describe("a written string with line breaks or edge whitespace stays one valid line", () => {
  it.each([
    "evil:1\"\n  secrets: []\n# x: ' &a *a",
    "two\nlines",
    "trailing newline\n",
    "\n\nleading breaks",
    "  edge spaces  ",
    "tab\there",
    `${"x".repeat(150)} ${"y".repeat(150)}`,
  ])("%j", (value) => {
    for (const path of [
      ["spec", "source_revision_config", "image_uri"],
      ["spec", "verify", "cases", 0, "input"],
    ]) {
      const { text, outcomes } = nestedEdit(path, value);
      expect(outcomes[0]?.written).toBe(true);
      const doc = parseDocument(text);
      expect(doc.errors).toEqual([]);
      const read = path.reduce<unknown>(
        (at, key) => (at as Record<string | number, unknown>)[key],
        doc.toJS(),
      );
      expect(read).toBe(value);
      expect(text.split("\n")).toHaveLength(NESTED.split("\n").length);
      expect(text).toContain("# kept");
    }
  });
});
