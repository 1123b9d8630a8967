import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { Controller, ControllerOptions } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { memoryLogger } from "./support.js";

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
