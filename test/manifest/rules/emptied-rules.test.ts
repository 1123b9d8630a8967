import { describe, expect, it } from "vitest";
import {
  checkEmptiedFiles,
  describeEmptiedText,
  emptiedTextWarning,
} from "../../../src/manifest/rules/emptied-rules.js";
import { parseManifestText } from "../../../src/manifest/parse/parse.js";
import { withCpuTime } from "../../support/cpu-time.js";

const LFS = `version https://git-lfs.github.com/spec/v1\noid sha256:${"0f".repeat(32)}\nsize 1234\n`;
const DOC = "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: a\n";

describe("emptied text", () => {
  it.each([
    ["", "is empty"],
    ["  \n\n", "is empty"],
    ["# a comment\n  # another\n", "only comments"],
    ["---\n--- # x\n...\n", "only comments or document separators"],
    [LFS, "git-lfs pointer"],
    ["<<<<<<< HEAD\n", "merge-conflict marker"],
    [">>>>>>> feature\n", "merge-conflict marker"],
  ])("%j %s", (text, words) => {
    expect(describeEmptiedText(text)).toContain(words);
  });

  it("anything else is not an emptied shape", () => {
    expect(describeEmptiedText("apiVersion: v1\nkind: ConfigMap\n")).toBeUndefined();
    expect(describeEmptiedText("just a string\n")).toBeUndefined();
  });

  it("is linear on a long hostile file", () => {
    const text = `${"\n".repeat(200_000)}x`;
    const { result, cpuMs } = withCpuTime(() => describeEmptiedText(text));
    expect(result).toBeUndefined();
    expect(cpuMs).toBeLessThan(500);
  });

  it("parsing warns no-documents, except beside documents (a conflict marker still warns)", () => {
    expect(parseManifestText("# only\n", "c.yaml").problems.map((p) => p.code)).toEqual(["no-documents"]);
    expect(parseManifestText(LFS, "l.yaml").problems.map((p) => p.code)).toEqual(["no-documents"]);
    expect(emptiedTextWarning(DOC, "a.yaml", 1)).toBeUndefined();
    expect(emptiedTextWarning(`${DOC}# >>>>>>> x\n`, "a.yaml", 1)).toBeUndefined();
    expect(emptiedTextWarning(`>>>>>>> x\n${DOC}`, "a.yaml", 1)?.code).toBe("no-documents");
  });
});

describe("checkEmptiedFiles", () => {
  const records = [
    { kind: "Deployment", name: "a", manifest_file: "a.yaml" },
    { kind: "Deployment", name: "b", manifest_file: "b.yaml" },
    { kind: "Deployment", name: "b2", manifest_file: "b.yaml" },
    { kind: "Deployment", name: "moved", manifest_file: "b.yaml" },
    { kind: "Deployment", name: "old", manifest_file: null },
  ];
  const loaded = {
    definedFiles: new Set(["a.yaml", "m.yaml"]),
    desired: new Set(["Deployment/a", "Deployment/moved"]),
  };

  it("an existing file that held objects and defines none is manifest-emptied, naming what it held", () => {
    const problems = checkEmptiedFiles(records, loaded, () => true);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: "b.yaml", severity: "error", code: "manifest-emptied" });
    expect(problems[0]!.message).toContain("Deployment b, Deployment b2 in it");
    expect(problems[0]!.message).not.toContain("moved");
  });

  it("a deleted file, a file out of scope or a file that still defines something is not", () => {
    expect(checkEmptiedFiles(records, loaded, () => false)).toEqual([]);
    expect(
      checkEmptiedFiles(
        records,
        loaded,
        () => true,
        (f) => f === "a.yaml",
      ),
    ).toEqual([]);
    const defined = { ...loaded, definedFiles: new Set(["a.yaml", "b.yaml"]) };
    expect(checkEmptiedFiles(records, defined, () => true)).toEqual([]);
  });
});
