import { relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { toRelative } from "../../src/manifest/parse/read-file.js";

// toRelative cuts the root's prefix off listed paths instead of calling path.relative per file:
// it must show every path as path.relative would (with forward slashes).

const viaRelative = (base: string, path: string) => relative(base, path).split(sep).join("/");

describe("toRelative", () => {
  it.each([
    ["/repo/manifests", "/repo/manifests/a.yaml"],
    ["/repo/manifests", "/repo/manifests/team-1/deep/b.yml"],
    ["/repo/manifests", "/repo/manifests-old/a.yaml"], // a sibling sharing the prefix is not inside
    ["/repo/manifests", "/repo/other/a.yaml"],
    ["/", "/a.yaml"],
  ])("shows %s + %s as path.relative does", (base, path) => {
    expect(toRelative(base, path)).toBe(viaRelative(base, path));
  });

  it("a root that is the file itself shows the file's name", () => {
    expect(toRelative("/repo/a.yaml", "/repo/a.yaml")).toBe("a.yaml");
  });
});
