import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { editValues } from "../../src/manifest/edit-values.js";

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
