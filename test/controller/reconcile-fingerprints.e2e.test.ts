import { join } from "node:path";
import { loadStatusStore } from "../../src/status/status-store.js";
import { expect, it, vi } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
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

const h = useControllerHarness("plumb-ctl-fp-", () => {
  crypto.forbidSync = false;
});

const start = (log = memoryLogger()) =>
  startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      env: { ...process.env, TOKEN_FROM_ENV: "t0ps3cret-value" },
      logger: log.logger,
    }),
  );

it("checks recorded secret fingerprints without scryptSync", async () => {
  const secrets = [{ name: "TOKEN", valueFrom: { env: "TOKEN_FROM_ENV" } }];
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  h.controller = await start();
  await waitFor("ready", () => h.controller!.ready());
  const recorded = (await loadStatusStore(join(h.dir, ".plumb", "status"))).objects.get("Deployment/alpha");
  expect(recorded?.secret_fingerprints?.values).toHaveProperty("TOKEN");
  expect(h.controller.status().objects[0]).not.toHaveProperty("secret_fingerprints");
  await h.controller.stop(1_000);

  // A restart plans alpha again against the recorded fingerprint: unchanged, so nothing is sent.
  crypto.forbidSync = true;
  const log = memoryLogger();
  h.controller = await start(log);
  await waitFor("ready", () => h.controller!.ready());
  const reconciled = log.lines().filter((l) => l.object === "alpha" && String(l.msg).startsWith("reconcile"));
  expect(reconciled.map((l) => [l.msg, l.result, l.err])).toEqual([["reconciled", "in-sync", undefined]]);
});
