import fc from "fast-check";
import jsonpatch, { type Operation } from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { diffDocuments, sortOperations } from "../../src/diff/diff-order.js";

// The plan's RFC 6902 `diff`: sorted by path, and still a patch that turns live into desired.

const apply = (document: object, operations: Operation[]) =>
  jsonpatch.applyPatch(structuredClone(document), operations, true, false).newDocument as unknown;

// Keys include digits (numeric object keys) and characters RFC 6901 escapes.
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom("x", "y", null, true)),
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom("a", "b", "name", "source", "source_config", "0", "1", "x/y", "t~"),
      tie("json"),
      {
        maxKeys: 5,
      },
    ),
  ),
}));
const document = fc.dictionary(
  fc.constantFrom("name", "secrets", "source", "source_config", "b", "0"),
  json,
  {
    maxKeys: 5,
  },
);

const keyOf = (path: string) => {
  const segments = path.split("/").slice(1);
  const index = segments.findIndex((s) => /^\d+$/.test(s));
  return (index === -1 ? segments : segments.slice(0, index)).join("\u0000");
};

describe("diffDocuments", () => {
  it("lists operations by path, alphabetically, segment by segment", () => {
    const live = { source_revision_config: { repo_ref: "main" }, source_config: { b: 1, a: 1 }, name: "x" };
    const desired = { source_revision_config: { repo_ref: "v2" }, source_config: { b: 2, a: 2 }, name: "y" };
    expect(diffDocuments(live, desired).map((o) => o.path)).toEqual([
      "/name",
      "/source_config/a",
      "/source_config/b",
      "/source_revision_config/repo_ref",
    ]);
  });

  it("keeps the order of operations inside one array, so removals still apply", () => {
    const live = { secrets: ["a", "b", "c", "d"], name: "n" };
    const desired = { secrets: ["a"], name: "m" };
    const operations = diffDocuments(live, desired);
    expect(operations.map((o) => `${o.op} ${o.path}`)).toEqual([
      "replace /name",
      "remove /secrets/3",
      "remove /secrets/2",
      "remove /secrets/1",
    ]);
    expect(apply(live, operations)).toEqual(desired);
  });

  it("is a valid patch from live to desired, sorted and stable, for any pair of documents", () => {
    fc.assert(
      fc.property(document, document, (live, desired) => {
        const operations = diffDocuments(live, desired);
        expect(apply(live, operations)).toEqual(desired);
        const keys = operations.map((o) => keyOf(o.path));
        for (let i = 1; i < keys.length; i += 1) expect(keys[i - 1]! <= keys[i]!).toBe(true);
        expect(sortOperations(operations)).toEqual(operations);
      }),
      { numRuns: 300 },
    );
  });
});
