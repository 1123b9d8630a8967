import { describe, expect, it } from "vitest";
import { parseDocument, Scalar, YAMLMap } from "yaml";
import { deleteAt, nodeAt, scalarAt } from "../../src/manifest/yaml-path.js";

const TEXT = `kind: Deployment
metadata:
  name: a
spec:
  secrets:
    - name: TOKEN
      valueFrom: {env: TOKEN}
  base: &base {x: 1}
  other: *base
`;

describe("yaml-path", () => {
  it("reads nodes and scalar values by path through mappings and lists", () => {
    const doc = parseDocument(TEXT);
    expect(scalarAt(doc, ["kind"])).toBe("Deployment");
    expect(scalarAt(doc, ["metadata", "name"])).toBe("a");
    expect(scalarAt(doc, ["spec", "secrets", 0, "valueFrom", "env"])).toBe("TOKEN");
    expect(nodeAt(doc, ["spec", "secrets", 0, "valueFrom"])).toBeInstanceOf(YAMLMap);
    expect(nodeAt(doc, ["metadata", "name"])).toBeInstanceOf(Scalar);
  });

  it("answers undefined for what is absent, a non-scalar, an index into a mapping, or behind an alias", () => {
    const doc = parseDocument(TEXT);
    expect(nodeAt(doc, ["spec", "missing"])).toBeUndefined();
    expect(nodeAt(doc, ["spec", "secrets", 5])).toBeUndefined();
    expect(nodeAt(doc, ["metadata", 0])).toBeUndefined();
    expect(scalarAt(doc, ["spec"])).toBeUndefined();
    expect(nodeAt(doc, ["spec", "other", "x"])).toBeUndefined();
    expect(scalarAt(doc, ["spec", "base", "x"])).toBe(1);
  });

  it("deletes a mapping entry, and says false when there is none", () => {
    const doc = parseDocument(TEXT);
    expect(deleteAt(doc, ["metadata", "name"])).toBe(true);
    expect(deleteAt(doc, ["metadata", "name"])).toBe(false);
    expect(deleteAt(doc, ["spec", "secrets", 0])).toBe(false);
    expect(deleteAt(doc, ["kind"])).toBe(true);
    expect(doc.toJS()).not.toHaveProperty("kind");
    expect(doc.toString()).not.toContain("name: a");
  });
});
