import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { acquireStateLock, type StateLock } from "../../src/lock/index.js";
import { realStoreDir } from "../../src/lock/local/real-store.js";

// A --status-dir given through a symlink by one process and by its real path by another named two
// lock paths (`link.lock`, `real.lock`) for one store: both held "the" lock at once, two writers of
// one set of records. The lock is keyed by the store's real path.

let root: string;
const held: StateLock[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-real-"));
});
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
  await rm(root, { recursive: true, force: true });
});

const options = { command: "plumb apply", timeoutMs: 0 };
const take = async (statusDir: string) => {
  const lock = await acquireStateLock({ statusDir }, options);
  held.push(lock);
  return lock;
};

it("a store named through a link and by its real path is one lock", async () => {
  const real = join(root, "status");
  await mkdir(real);
  await symlink(real, join(root, "link"));
  await take(join(root, "link"));
  await expect(take(real)).rejects.toMatchObject({ code: "state-locked" });
});

it("so is a link to a store not made yet, and a trailing slash", async () => {
  await symlink(join(root, "status"), join(root, "link")); // dangling until the first record
  await take(join(root, "link"));
  await expect(take(`${join(root, "status")}/`)).rejects.toMatchObject({ code: "state-locked" });
});

it("and a store not made yet under a linked directory, or behind a chain of relative links", async () => {
  await mkdir(join(root, "repo"));
  await symlink("repo", join(root, "checkout")); // relative, as `ln -s repo checkout` makes it
  await take(join(root, "checkout", ".plumb", "status"));
  await expect(take(join(root, "repo", ".plumb", "status"))).rejects.toMatchObject({ code: "state-locked" });
  await symlink("second", join(root, "first"));
  await symlink("store", join(root, "second")); // first -> second -> store, none of it made
  await take(join(root, "first"));
  await expect(take(join(root, "store"))).rejects.toMatchObject({ code: "state-locked" });
});

it("a loop of links as the store ends at the kernel's limit: a path, not a stack overflow", () => {
  const a = join(root, "a");
  const b = join(root, "b");
  return Promise.all([symlink(b, a), symlink(a, b)]).then(() => {
    for (const start of [a, b, join(a, "status")]) {
      const real = realStoreDir(start);
      expect([a, b, join(a, "status"), join(b, "status")]).toContain(real);
    }
  });
});
