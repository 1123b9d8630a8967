import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { directoriesBelow, storesBelowInListing } from "../../src/status/stores-below.js";

// Where the stores below a directory PATH are (docs/status.md "Stores above and below"): one walk
// of the directories of its tree, or one listing of the status branch under it.

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function tree(dirs: string[]): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), "plumb-stores-below-"));
  made.push(base);
  for (const dir of dirs) await mkdir(join(base, dir), { recursive: true });
  return base;
}

describe("directoriesBelow", () => {
  it("finds the nested stores, nearest first, and not PATH's own", async () => {
    const base = await tree([".plumb/status", "b/.plumb/status", "a/deep/er/.plumb/status", "a/.plumb", "c"]);
    await writeFile(join(base, "c", ".plumb"), "a file, not a store");
    expect(await directoriesBelow(base)).toEqual([join(base, "a"), join(base, "b"), join(base, "a/deep/er")]);
  });

  it("enters neither node_modules, .git nor .plumb itself", async () => {
    const base = await tree([
      "node_modules/pkg/.plumb/status",
      ".git/x/.plumb/status",
      "sub/.plumb/status/staging/.plumb/status",
      "sub/.plumb/nested/.plumb/status",
    ]);
    expect(await directoriesBelow(base)).toEqual([join(base, "sub")]);
  });

  it("reads at most `limit` directories, and nothing under a missing PATH", async () => {
    const base = await tree(["a/.plumb/status", "b/c/.plumb/status"]);
    expect(await directoriesBelow(base, 2)).toEqual([join(base, "a")]);
    expect(await directoriesBelow(join(base, "missing"))).toEqual([]);
  });
});

describe("storesBelowInListing", () => {
  const listing = [
    ".plumb/status/deployment.own.json",
    "sub/.plumb/status/deployment.a.json",
    "sub/.plumb/status/prune-ledger.jsonl",
    "sub/.plumb/status/staging/deployment.s.json",
    "sub/deep/.plumb/status/deployment.d.json",
    "node_modules/p/.plumb/status/deployment.n.json",
    "other/.plumb/status/deployment.c.json",
  ];

  it("groups the records of each store strictly below the base, ENV/ with an environment", () => {
    expect(storesBelowInListing(listing, "", undefined)).toEqual(
      new Map([
        ["sub/.plumb/status", ["deployment.a.json"]],
        ["sub/deep/.plumb/status", ["deployment.d.json"]],
        ["other/.plumb/status", ["deployment.c.json"]],
      ]),
    );
    expect(storesBelowInListing(listing, "", "staging")).toEqual(
      new Map([["sub/.plumb/status/staging", ["deployment.s.json"]]]),
    );
  });

  it("under a base directory, only its tree and not its own store", () => {
    expect(storesBelowInListing(listing, "sub", undefined)).toEqual(
      new Map([["sub/deep/.plumb/status", ["deployment.d.json"]]]),
    );
    expect(storesBelowInListing(listing, "su", undefined)).toEqual(new Map());
  });
});
