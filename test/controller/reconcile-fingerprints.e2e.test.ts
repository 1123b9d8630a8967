import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A reconcile checks secret values against the recorded fingerprints with async scrypt (libuv's
// threadpool), never scryptSync on the event loop that also serves probes and every other reconcile.
// node:crypto's scryptSync is made to throw once the first controller has recorded fingerprints.

const crypto = vi.hoisted(() => ({ forbidSync: false }));
vi.mock("node:crypto", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:crypto")>();
  return {
    ...original,
    scryptSync: (...args: Parameters<typeof original.scryptSync>) => {
      if (crypto.forbidSync) throw new Error("scryptSync on the event loop");
      return original.scryptSync(...args);
    },
  };
});

let dir: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-fp-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  crypto.forbidSync = false;
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

const start = (log = memoryLogger()) =>
  startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    selfHeal: false,
    concurrency: 2,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: { ...process.env, TOKEN_FROM_ENV: "t0ps3cret-value" },
    logger: log.logger,
  });

it("checks recorded secret fingerprints without scryptSync", async () => {
  const secrets = [{ name: "TOKEN", valueFrom: { env: "TOKEN_FROM_ENV" } }];
  await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  controller = await start();
  await waitFor("ready", () => controller!.ready());
  expect(controller.status().objects[0]?.secret_fingerprints?.values).toHaveProperty("TOKEN");
  await controller.stop(1_000);

  // A restart plans alpha again against the recorded fingerprint: unchanged, so nothing is sent.
  crypto.forbidSync = true;
  const log = memoryLogger();
  controller = await start(log);
  await waitFor("ready", () => controller!.ready());
  const reconciled = log.lines().filter((l) => l.name === "alpha" && String(l.msg).startsWith("reconcile"));
  expect(reconciled.map((l) => [l.msg, l.result, l.err])).toEqual([["reconciled", "in-sync", undefined]]);
});
