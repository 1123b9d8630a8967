import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type Controller, type ControllerOptions, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { manifestRemote } from "../support/git-clones.js";
import { container, memoryLogger, writeDoc } from "./support.js";

// The common frame of the in-process controller tests: a temporary manifest directory and a fast
// local control plane per test, and whatever controller the test started is stopped afterwards.

export type ControllerHarness = { dir: string; cp: RunningControlPlane; controller: Controller | undefined };

export function useControllerHarness(prefix: string, afterEachTest?: () => void): ControllerHarness {
  const h = { controller: undefined } as ControllerHarness;
  beforeEach(async () => {
    h.dir = await mkdtemp(join(tmpdir(), prefix));
    h.cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  });
  afterEach(async () => {
    afterEachTest?.();
    await h.controller?.stop(1_000);
    h.controller = undefined;
    await h.cp.stop();
    await rm(h.dir, { recursive: true, force: true });
  });
  return h;
}

/** Controller options tuned for tests (short debounce, polling and backoff) against `cp`. */
export function fastControllerOptions(
  cp: RunningControlPlane,
  options: Partial<ControllerOptions> & Pick<ControllerOptions, "source">,
): ControllerOptions {
  return {
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    selfHeal: false,
    concurrency: 2,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    pruneDelayMs: 0, // --prune deletes at the first scan that sees a removal (the delay: test/chaos/prune)
    env: process.env,
    logger: memoryLogger().logger,
    ...options,
  };
}

/** useGitControllerHarness's state: a bare remote whose `deploy/` holds alpha, and its work clone. */
export type GitControllerHarness = {
  tmp: string;
  bare: string;
  work: string;
  cp: RunningControlPlane;
  controller: Controller | undefined;
  /** Commits everything in the work clone and pushes it to `main`. */
  push: (message: string) => Promise<void>;
  /**
   * A controller following `main`'s `deploy/` (checkout under tmp, polling every 250 ms: each poll a
   * fetch, git processes; its tests wait on conditions and none counts polls).
   */
  start: (options?: Partial<ControllerOptions>) => Promise<Controller>;
};

/** The frame of the controller tests that follow a git remote (test/support/git-clones.ts). */
export function useGitControllerHarness(prefix: string): GitControllerHarness {
  const h = { controller: undefined } as GitControllerHarness;
  beforeEach(async () => {
    h.tmp = await mkdtemp(join(tmpdir(), prefix));
    ({ bare: h.bare, work: h.work, push: h.push } = await manifestRemote(h.tmp));
    await writeDoc(join(h.work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
    await h.push("first");
    h.cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  });
  afterEach(async () => {
    await h.controller?.stop(1_000);
    h.controller = undefined;
    await h.cp.stop();
    // A fetch the stop ended may still be taking its git processes down (stoppable-git.ts: up to 2 s).
    await rm(h.tmp, { recursive: true, force: true, maxRetries: 30, retryDelay: 100 });
  });
  h.start = (options = {}) =>
    startController(
      fastControllerOptions(h.cp, {
        source: {
          kind: "git",
          url: h.bare,
          branch: "main",
          path: "deploy",
          workDir: join(h.tmp, "checkout"),
          intervalMs: 250,
        },
        ...options,
      }),
    );
  return h;
}
