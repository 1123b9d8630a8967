import { execFile } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadStatus, publishStatus } from "../../src/git/status/status-source.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { sampleStatus } from "../reconcile/fixtures.js";

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd })).stdout.trim();

async function manifestRepo(
  dirName = "deploy",
): Promise<{ base: string; bare: string; clone: string; root: string }> {
  const base = await mkdtemp(join(tmpdir(), "plumb-sb-"));
  const bare = join(base, "origin.git");
  await run("git", ["init", "--quiet", "--bare", "--initial-branch=main", bare]);
  const clone = join(base, "work");
  await run("git", ["clone", "--quiet", bare, clone]);
  const root = join(clone, dirName);
  await mkdir(root, { recursive: true });
  await writeFile(join(root, "app.yaml"), "apiVersion: plumb/v1\n");
  await writeFile(join(clone, ".gitignore"), ".plumb/\n");
  await git(clone, "checkout", "--quiet", "-b", "main");
  await git(clone, "add", ".");
  await git(clone, "commit", "--quiet", "-m", "manifests");
  await git(clone, "push", "--quiet", "origin", "main");
  return { base, bare, clone, root };
}

describe("status branch", () => {
  it("commits to the branch, pushes, and a fresh clone reads it back", async () => {
    const { base, bare, clone, root } = await manifestRepo();
    const location = { root, statusBranch: "plumb-status" };
    await saveObjectStatus(join(root, ".plumb/status"), sampleStatus("alpha"), anyFile);
    const first = await publishStatus(location, "plumb apply: status");
    expect(first?.pushed).toBe(true);
    // Nothing changed: no empty commit.
    expect((await publishStatus(location, "again"))?.commit).toBeNull();
    // The manifest branch and worktree are untouched.
    expect(await git(clone, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
    expect(await git(clone, "status", "--porcelain")).toBe("");
    expect(await git(bare, "ls-tree", "-r", "--name-only", "plumb-status")).toBe(
      "deploy/.plumb/status/deployment.alpha.json",
    );
    expect(await git(bare, "ls-tree", "-r", "--name-only", "main")).not.toContain(".plumb");

    // A second record later: appended as a new commit on the same branch.
    await saveObjectStatus(
      join(root, ".plumb/status"),
      sampleStatus("beta", { updated_at: "2026-02-01T00:00:00Z" }),
      anyFile,
    );
    await publishStatus(location, "second");
    expect(await git(bare, "rev-list", "--count", "plumb-status")).toBe("2");

    const fresh = join(base, "fresh");
    await run("git", ["clone", "--quiet", bare, fresh]);
    const store = await loadStatus({ root: join(fresh, "deploy"), statusBranch: "plumb-status" });
    expect([...store.objects.keys()].sort()).toEqual(["Deployment/alpha", "Deployment/beta"]);
    expect(store.objects.get("Deployment/alpha")?.secret_fingerprints).toEqual(
      sampleStatus("a").secret_fingerprints,
    );
  });

  it("keeps the records of a directory whose name starts with two dots under it on the branch", async () => {
    // `..deploy` is inside the repository: its store is `..deploy/.plumb/status/`, not the
    // repository root's (a check of the text "starts with .." took it for a directory outside).
    const { bare, root } = await manifestRepo("..deploy");
    await saveObjectStatus(join(root, ".plumb/status"), sampleStatus("alpha"), anyFile);
    await publishStatus({ root, statusBranch: "plumb-status" }, "plumb apply: status");
    expect(await git(bare, "ls-tree", "-r", "--name-only", "plumb-status")).toBe(
      "..deploy/.plumb/status/deployment.alpha.json",
    );
  });

  it("refuses the branch the manifests come from and reads a missing branch as empty", async () => {
    const { root } = await manifestRepo();
    await expect(publishStatus({ root, statusBranch: "main" }, "x")).rejects.toThrow(
      /branch the manifests come from/,
    );
    const store = await loadStatus({ root, statusBranch: "nope" });
    expect(store.objects.size).toBe(0);
  });
});
