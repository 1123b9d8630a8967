import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { checkManifestRoot } from "../../src/controller/source/manifest-source.js";
import { checkStoreInsideDir } from "../../src/controller/source/store-inside-dir.js";

// A --dir that is a symlink loop is said to be one at start ("cannot be read (ELOOP)" before). A store's `.plumb` (or `.plumb/status`) that is a symlink loop is refused at start, as one out of
// the tree is, and said to be a loop: it was called "a symlink to nothing (that could be made
// later)", the words of a dangling link, as the manifests' loader called a loop a missing target.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-store-loop-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it.each([
  ["--dir's .plumb", [".plumb"], "controller"],
  ["the manifests' .plumb/status", [".plumb", "status"], "command"],
] as const)("%s a symlink loop: refused, said to be a loop", async (_, parts, by) => {
  await mkdir(join(dir, ...parts.slice(0, -1)), { recursive: true });
  await symlink(parts.at(-1)!, join(dir, ...parts));
  await expect(checkStoreInsideDir(dir, undefined, by)).rejects.toMatchObject({
    code: "store-outside-dir",
    message: expect.stringContaining(
      `${join(...parts)} is a symlink loop (ELOOP) that never reaches a directory; `,
    ) as string,
  });
});

it("a link to nothing is still said to be one", async () => {
  await symlink("nowhere", join(dir, ".plumb"));
  await expect(checkStoreInsideDir(dir, undefined)).rejects.toThrow(
    ".plumb is a symlink to nothing (that could be made later), outside the directory",
  );
});

it("--dir a symlink loop: refused at start, said to be a loop", async () => {
  const tree = join(dir, "tree");
  await symlink("tree", tree);
  await expect(checkManifestRoot({ kind: "dir", dir: tree }, tree)).rejects.toMatchObject({
    code: "path-unreadable",
    message: `manifest directory ${tree} is a symlink loop (ELOOP) that never reaches a directory; check --dir`,
  });
});
