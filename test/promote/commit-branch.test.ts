import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitOnNewBranch } from "../../src/promote/commit-branch.js";

// promote --branch in a real repository whose manifests are a folder of it: the commit lands on a
// new branch, the working tree, its branch and its other files untouched; taken branches and
// files that differ from HEAD are refused, leaving no branch behind.

let repo: string;
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
    cwd: repo,
    encoding: "utf8",
  });
const BEFORE = "kind: Deployment\nmetadata:\n  name: a # kept\n";
const AFTER = `${BEFORE}environments:\n  prod:\n    spec:\n      source_revision_config:\n        repo_ref: refs/tags/v2\n`;
const change = [{ file: "a.yaml", before: BEFORE, after: AFTER }];

beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "plumb-promote-branch-"));
  await mkdir(join(repo, "deploy"));
  await writeFile(join(repo, "deploy", "a.yaml"), BEFORE);
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "first");
});
afterEach(() => rm(repo, { recursive: true, force: true }));

describe("commitOnNewBranch", () => {
  it("commits the change on a new branch from HEAD; the checkout stays as it was", async () => {
    const commit = await commitOnNewBranch(
      join(repo, "deploy"),
      "promote/prod",
      change,
      "plumb: promote\n\nevidence",
    );
    expect(git("rev-parse", "promote/prod").trim()).toBe(commit);
    expect(git("show", "promote/prod:deploy/a.yaml")).toBe(AFTER);
    expect(git("log", "-1", "--format=%B", "promote/prod").trim()).toBe("plumb: promote\n\nevidence");
    expect(git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
    expect(await readFile(join(repo, "deploy", "a.yaml"), "utf8")).toBe(BEFORE);
    expect(git("worktree", "list").trim().split("\n")).toHaveLength(1);
    await expect(commitOnNewBranch(join(repo, "deploy"), "promote/prod", change, "m")).rejects.toMatchObject({
      code: "promotion-branch-failed",
      message: expect.stringContaining("branch promote/prod already exists") as string,
    });
  });

  it("refuses files that differ from HEAD and bad branch names, and makes no branch", async () => {
    await writeFile(join(repo, "deploy", "a.yaml"), `${BEFORE}# edited\n`);
    await expect(commitOnNewBranch(join(repo, "deploy"), "p", change, "m")).rejects.toThrow(
      /these files the promotion was judged from differ from it:\n\s*M deploy\/a\.yaml/,
    );
    await expect(commitOnNewBranch(join(repo, "deploy"), "bad..name", change, "m")).rejects.toThrow(
      "--branch bad..name: not a valid branch name",
    );
    expect(git("branch", "--list").trim()).toBe("* main");
  });

  it("refuses a branch name git would expand to another one (@{-1}, the branch checked out before)", async () => {
    git("checkout", "-q", "-b", "previous");
    git("checkout", "-q", "main");
    await expect(commitOnNewBranch(join(repo, "deploy"), "@{-1}", change, "m")).rejects.toThrow(
      "--branch @{-1}: not a valid branch name",
    );
    expect(
      git("branch", "--list")
        .trim()
        .split("\n")
        .map((b) => b.trim()),
    ).toEqual(["* main", "previous"]);
    expect(git("rev-parse", "previous")).toBe(git("rev-parse", "main"));
  });

  it("refuses when any file the promotion was judged from differs from HEAD, not only the edited ones", async () => {
    await mkdir(join(repo, "envs"));
    await writeFile(
      join(repo, "envs", "prod.yaml"),
      "kind: Environment\nspec:\n  promotion:\n    gates: {soak: 2h}\n",
    );
    await writeFile(join(repo, "deploy", "b.yaml"), "kind: Deployment\nmetadata:\n  name: b\n");
    git("add", ".");
    git("commit", "-qm", "second");
    const attempt = () => commitOnNewBranch(join(repo, "deploy"), "p", change, "m", ["../envs/prod.yaml"]);
    // The gate loosened in the working copy only: the branch would carry a promotion HEAD blocks.
    await writeFile(
      join(repo, "envs", "prod.yaml"),
      "kind: Environment\nspec:\n  promotion:\n    gates: {}\n",
    );
    await expect(attempt()).rejects.toThrow(/judged from differ from it:\n\s*M envs\/prod\.yaml/);
    git("checkout", "-q", "envs/prod.yaml");
    await writeFile(join(repo, "deploy", "b.yaml"), "kind: Deployment\nmetadata:\n  name: b # edited\n");
    await expect(attempt()).rejects.toThrow(/M deploy\/b\.yaml/);
    git("checkout", "-q", "deploy/b.yaml");
    await mkdir(join(repo, "deploy", "more"));
    await writeFile(join(repo, "deploy", "more", "c.yml"), "kind: Deployment\n");
    await expect(attempt()).rejects.toThrow(/\?\? deploy\/more\/c\.yml/);
    await rm(join(repo, "deploy", "more"), { recursive: true });
    expect(git("branch", "--list").trim()).toBe("* main");
    // What the promotion did not read may differ: the status store, other files, YAML elsewhere.
    await mkdir(join(repo, "deploy", ".plumb", "status"), { recursive: true });
    await writeFile(join(repo, "deploy", ".plumb", "status", "a.json"), "{}");
    await writeFile(join(repo, "README.md"), "notes\n");
    await writeFile(join(repo, "ci.yaml"), "on: push\n");
    expect(await attempt()).toBe(git("rev-parse", "p").trim());
  });
});
