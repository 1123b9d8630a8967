import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openManifestSource } from "../../src/controller/source/manifest-source.js";
import { memoryLogger } from "../controller/support.js";

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
