import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { directoriesAbove, loadStatusWithNearby } from "../../src/git/status/status-nearby.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { blankObjectStatus, type ObjectStatus } from "../../src/status/status-types.js";

// Which stores above and below a PATH are read (docs/status.md "Stores above and below"): the
// default store of each directory above it up to the git root, ENV/ with an environment, none
// outside a repository; with `below`, those of a directory PATH's tree, none for one file.

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

const applied = (name: string, at: string, tag: string): ObjectStatus => ({
  ...blankObjectStatus("Deployment", name),
  id: `id-${name}`,
  applied_at: at,
  secret_fingerprints: { salt: "s", values: { KEY: tag } },
  manifest_file: `${name}.yaml`,
});

describe("directoriesAbove", () => {
  it("lists the directories above, nearest first, up to and including the top", () => {
    expect(directoriesAbove("/r/a/b", "/r")).toEqual(["/r/a", "/r"]);
    expect(directoriesAbove("/r/a", "/r")).toEqual(["/r"]);
  });

  it("lists none for the top itself or a directory outside it", () => {
    expect(directoriesAbove("/r", "/r")).toEqual([]);
    expect(directoriesAbove("/other/a", "/r")).toEqual([]);
    expect(directoriesAbove("/rr/a", "/r")).toEqual([]);
  });

  it("takes a directory whose name starts with two dots for one inside the top", () => {
    expect(directoriesAbove("/r/..a/b", "/r")).toEqual(["/r/..a", "/r"]);
    expect(directoriesAbove("/r/..a", "/r")).toEqual(["/r"]);
    expect(directoriesAbove("/r/../a", "/r")).toEqual([]);
  });
});

describe("loadStatusWithNearby", () => {
  it("reads the stores above up to the git root (ENV/ with an environment), none above it", async () => {
    const base = await mkdtemp(join(tmpdir(), "plumb-status-above-"));
    made.push(base);
    const repo = join(base, "repo");
    const sub = join(repo, "a", "b");
    await mkdir(sub, { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    await saveObjectStatus(
      join(base, ".plumb/status"),
      applied("x", "2026-01-01T12:00:00Z", "outside"),
      anyFile,
    );
    await saveObjectStatus(
      join(repo, ".plumb/status"),
      applied("x", "2026-01-01T10:00:00Z", "root"),
      anyFile,
    );
    await saveObjectStatus(join(repo, "a/.plumb/status"), applied("x", "2026-01-01T11:00:00Z", "a"), anyFile);
    await saveObjectStatus(
      join(repo, ".plumb/status/staging"),
      applied("y", "2026-01-01T10:00:00Z", "env"),
      anyFile,
    );

    const plain = await loadStatusWithNearby({ root: sub }, repo);
    expect(plain.store.objects.size).toBe(0);
    expect(plain.appliedNearby.get("Deployment/x")?.secret_fingerprints?.values).toEqual({ KEY: "a" });
    expect(plain.appliedNearby.get("Deployment/x")?.manifest_file).toBeUndefined();
    expect(plain.appliedNearby.has("Deployment/y")).toBe(false);

    const staging = await loadStatusWithNearby({ root: sub, environment: "staging" }, repo);
    expect([...staging.appliedNearby.keys()]).toEqual(["Deployment/y"]);

    const none = await loadStatusWithNearby({ root: sub }, undefined);
    expect(none.appliedNearby.size).toBe(0);
  });

  it("with below, reads the stores of a directory PATH's tree (ENV/ with an environment), none for one file", async () => {
    const repo = await mkdtemp(join(tmpdir(), "plumb-status-below-"));
    made.push(repo);
    execFileSync("git", ["init", "-q", repo]);
    await mkdir(join(repo, "a", "b"), { recursive: true });
    await writeFile(join(repo, "a", "b", "x.yaml"), "");
    await saveObjectStatus(join(repo, ".plumb/status"), applied("x", "2026-01-01T10:00:00Z", "own"), anyFile);
    await saveObjectStatus(
      join(repo, "a/b/.plumb/status"),
      applied("x", "2026-01-01T11:00:00Z", "b"),
      anyFile,
    );
    await saveObjectStatus(
      join(repo, "a/.plumb/status/staging"),
      applied("y", "2026-01-01T10:00:00Z", "env"),
      anyFile,
    );
    await saveObjectStatus(
      join(repo, "node_modules/p/.plumb/status"),
      applied("z", "2026-01-01T10:00:00Z", "n"),
      anyFile,
    );

    const tree = await loadStatusWithNearby({ root: repo }, repo, { below: true });
    expect(tree.store.objects.get("Deployment/x")?.secret_fingerprints?.values).toEqual({ KEY: "own" });
    expect(tree.appliedNearby.get("Deployment/x")?.secret_fingerprints?.values).toEqual({ KEY: "b" });
    expect(tree.appliedNearby.get("Deployment/x")?.manifest_file).toBeUndefined();
    expect([...tree.appliedNearby.keys()]).toEqual(["Deployment/x"]);

    const staging = await loadStatusWithNearby({ root: repo, environment: "staging" }, repo, { below: true });
    expect([...staging.appliedNearby.keys()]).toEqual(["Deployment/y"]);

    expect((await loadStatusWithNearby({ root: repo }, repo)).appliedNearby.size).toBe(0);
    const file = await loadStatusWithNearby({ root: join(repo, "a", "b", "x.yaml") }, repo, { below: true });
    expect(file.appliedNearby.get("Deployment/x")?.secret_fingerprints?.values).toEqual({ KEY: "own" }); // above only
  });
});

describe("a store nearby that git tracks", () => {
  it("is not read: a committed record says nothing of what was sent (as for PATH's own store)", async () => {
    const repo = await mkdtemp(join(tmpdir(), "plumb-status-nearby-tracked-"));
    made.push(repo);
    execFileSync("git", ["init", "-q", repo]);
    await mkdir(join(repo, "sub"), { recursive: true });
    await saveObjectStatus(
      join(repo, ".plumb/status"),
      applied("x", "2026-01-01T10:00:00Z", "above"),
      anyFile,
    );
    await saveObjectStatus(
      join(repo, "sub/a/.plumb/status"),
      applied("y", "2026-01-01T10:00:00Z", "below"),
      anyFile,
    );
    const read = async () =>
      (await loadStatusWithNearby({ root: join(repo, "sub") }, repo, { below: true })).appliedNearby;
    expect([...(await read()).keys()].sort()).toEqual(["Deployment/x", "Deployment/y"]);
    execFileSync("git", ["add", "-f", ".plumb", "sub/a/.plumb"], { cwd: repo });
    expect([...(await read()).keys()]).toEqual([]);
  });
});
