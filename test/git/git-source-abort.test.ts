import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openManifestSource } from "../../src/controller/source/manifest-source.js";
import { memoryLogger, waitFor } from "../controller/support.js";

// A controller stopped (SIGTERM) during its first clone stops then: the clone's git is killed. It
// waited for the clone to end, which a git server that says nothing makes a minute (the stall
// limit, git-credentials.ts) and, before that limit, for ever: past any shutdown grace.

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "plumb-clone-abort-"));
});
afterEach(() => rm(work, { recursive: true, force: true }));

describe("the first clone", () => {
  it("ends when the controller is stopped, not when the git server answers", async () => {
    const silent = createServer(() => {}); // reads each request, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/acme/manifests.git`;
    const stop = new AbortController();
    try {
      const opening = openManifestSource(
        { kind: "git", url, branch: "main", workDir: join(work, "checkout"), intervalMs: 60_000 },
        { PATH: process.env.PATH, HOME: work },
        memoryLogger().logger,
        stop.signal,
      );
      const outcome = opening.then(
        () => "opened",
        () => "stopped",
      );
      setTimeout(() => stop.abort(), 300);
      const started = Date.now();
      const first = await Promise.race([
        outcome,
        new Promise((resolve) => setTimeout(() => resolve("still cloning"), 10_000)),
      ]);
      expect(first).toBe("stopped");
      expect(Date.now() - started).toBeLessThan(10_000);
      await outcome; // (without the fix, the clone ends at the 60 s stall limit)
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  }, 90_000);
});

describe("closing a source whose fetch the stop ended", () => {
  it("waits for that fetch's git to be gone", async () => {
    // A repository to follow, and a `git` first on the PATH that, for a fetch, takes 1 s to end
    // after SIGTERM (as git and its helper may, up to the SIGKILL 2 s later) and then says so.
    const repo = join(work, "manifests.git");
    execFileSync("git", ["init", "-q", "--bare", "--initial-branch=main", repo]);
    const seed = join(work, "seed");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: work });
    git("clone", "-q", repo, seed);
    git("-C", seed, "commit", "-q", "--allow-empty", "-m", "first");
    git("-C", seed, "push", "-q", "origin", "HEAD:main");
    const bin = join(work, "bin");
    const ended = join(work, "fetch-ended");
    await mkdir(bin);
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    await writeFile(
      join(bin, "git"),
      `#!/bin/sh\nif [ "$1" = fetch ]; then\n  trap 'sleep 1; echo ended > "${ended}"; exit 143' TERM\n  echo started > "${ended}.started"\n  sleep 30 & wait\n  exit 0\nfi\nexec "${realGit}" "$@"\n`,
      { mode: 0o755 },
    );
    const stop = new AbortController();
    const source = await openManifestSource(
      {
        kind: "git",
        url: `file://${repo}`,
        branch: "main",
        workDir: join(work, "checkout"),
        intervalMs: 60_000,
      },
      { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: work },
      memoryLogger().logger,
      stop.signal,
    );
    const fetching = source.fetch!().catch(() => "stopped");
    await waitFor("the fetch", () => existsSync(`${ended}.started`));
    stop.abort();
    await source.close();
    // Without the wait, close returned while the fetch's git still ran (its file not yet written).
    expect(existsSync(ended)).toBe(true);
    expect(await fetching).toBe("stopped");
  }, 30_000);
});
