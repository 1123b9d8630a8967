import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DirectoryWatcher, watchDirectory } from "../../../src/controller/source/directory-source.js";

// The real watcher on a real temporary tree: events arrive from the kernel, so each test waits for
// the event it needs (bounded), never for a fixed time.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-watch-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

async function start(dir: string) {
  const changes: string[] = [];
  const errors: Error[] = [];
  const watcher: DirectoryWatcher = watchDirectory(
    dir,
    (path) => changes.push(path),
    (e) => errors.push(e),
  );
  cleanups.unshift(() => watcher.close());
  await watcher.ready;
  const until = async (what: string, check: () => boolean) => {
    // Ends on its condition; 20 s as the other waits (5 s is within what a loaded machine delays).
    const deadline = Date.now() + 20_000;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; changes: ${changes.join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  return { watcher, changes, errors, until };
}

describe("watchDirectory", () => {
  it("keeps one watch per directory, not per file", async () => {
    const files: Record<string, string> = {};
    for (const team of ["a", "b", "c"])
      for (let i = 0; i < 50; i++) files[`${team}/agent-${i}.yaml`] = "x: 1\n";
    const { watcher, errors } = await start(await tree(files));
    expect(watcher.watched()).toBe(4); // the root and three team directories, for 150 files
    expect(errors).toEqual([]);
  });

  it("reports a save in a nested directory with the file's path", async () => {
    const dir = await tree({ "team/deep/agent.yaml": "x: 1\n" });
    const { changes, until } = await start(dir);
    await writeFile(join(dir, "team/deep/agent.yaml"), "x: 2\n");
    await until("the save", () => changes.includes(join(dir, "team/deep/agent.yaml")));
  });

  it("watches a directory created after start, and files written into it", async () => {
    const dir = await tree({ "agent.yaml": "x: 1\n" });
    const { watcher, changes, until } = await start(dir);
    await mkdir(join(dir, "new-team"));
    await until("the new directory's watch", () => watcher.watched() === 2);
    const file = join(dir, "new-team", "agent.yaml");
    await writeFile(file, "x: 1\n");
    await until("the file in the new directory", () => changes.includes(file));
  });

  it("drops the watches of a removed directory tree", async () => {
    const dir = await tree({ "team/one/agent.yaml": "x: 1\n", "team/two/agent.yaml": "x: 1\n" });
    const { watcher, until } = await start(dir);
    expect(watcher.watched()).toBe(4);
    await rm(join(dir, "team"), { recursive: true });
    await until("the watches to go", () => watcher.watched() === 1);
  });

  it("does not watch .git, .plumb or node_modules, nor report their creation", async () => {
    const dir = await tree({
      ".git/HEAD": "ref\n",
      "node_modules/x/y.yaml": "x: 1\n",
      "agent.yaml": "x: 1\n",
    });
    const { watcher, changes, until } = await start(dir);
    expect(watcher.watched()).toBe(1);
    await writeFile(join(dir, ".git", "HEAD"), "ref2\n");
    await mkdir(join(dir, ".plumb"));
    await writeFile(join(dir, "agent.yaml"), "x: 2\n");
    await until("the manifest's save", () => changes.includes(join(dir, "agent.yaml")));
    expect(changes.filter((path) => /\.git|\.plumb|node_modules/.test(path))).toEqual([]);
  });

  it("follows a symlinked directory inside the root, not one pointing outside it", async () => {
    const outside = await tree({ "elsewhere.yaml": "x: 1\n" });
    const dir = await tree({ "shared/agent.yaml": "x: 1\n" });
    await symlink(join(dir, "shared"), join(dir, "linked"));
    await symlink(outside, join(dir, "escape"));
    const { watcher } = await start(dir);
    expect(watcher.watched()).toBe(2); // root and shared once (linked is the same directory), not escape
  });

  it("does not watch through a link into node_modules or .git, as the loader does not read there", async () => {
    const dir = await tree({
      "node_modules/pkg/a.yaml": "x: 1\n",
      ".git/hooks/h": "",
      "team/a.yaml": "x: 1\n",
    });
    await symlink(join(dir, "node_modules", "pkg"), join(dir, "tools"));
    await symlink(join(dir, ".git", "hooks"), join(dir, "hooks"));
    const { watcher } = await start(dir);
    expect(watcher.watched()).toBe(2); // the root and team
  });

  it("watches 1,000 nested directories in linear time, and still follows links inside and loops once", async () => {
    const nested = Array.from({ length: 1000 }, () => "x");
    const dir = await tree({ [`${nested.join("/")}/a.yaml`]: "x: 1\n" });
    await symlink("..", join(dir, "x", "up")); // to an ancestor: watched once
    await symlink("loop", join(dir, "loop")); // a loop: no directory
    // A realpath call per directory lstat'ed every component of its path: ~7 s of CPU here, now
    // ~0.2 s. CPU time (test/support/cpu-time.ts), so a loaded machine does not make it fail.
    const before = process.cpuUsage();
    const { watcher, errors } = await start(dir);
    const used = process.cpuUsage(before);
    expect(watcher.watched()).toBe(1001);
    expect(errors).toEqual([]);
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
  });
});
