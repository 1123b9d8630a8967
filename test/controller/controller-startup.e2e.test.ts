import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// What is fatal at startup (a manifest root that is not there) and what is only reported later (the
// directory vanishing under a running controller).

let dir: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-start-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

const start = (root: string, log = memoryLogger()) =>
  startController({
    source: { kind: "dir", dir: root },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    statusDir: join(dir, "status"),
    selfHeal: false,
    concurrency: 2,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: process.env,
    logger: log.logger,
  });

describe("controller startup", () => {
  it("refuses a manifest directory that does not exist", async () => {
    const missing = join(dir, "nope");
    await expect(start(missing)).rejects.toMatchObject({
      code: "path-not-found",
      message: `manifest directory ${missing} does not exist; check --dir`,
    });
  });

  it("refuses a file given as the manifest directory", async () => {
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    await expect(start(join(dir, "a.yaml"))).rejects.toMatchObject({ code: "path-not-directory" });
    expect(await api(cp.url).deployments()).toEqual([]);
  });

  it("reports a directory that disappears later and keeps running", async () => {
    const root = join(dir, "manifests");
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:1"));
    const log = memoryLogger();
    controller = await start(root, log);
    await waitFor("ready", () => controller!.ready());
    await rm(root, { recursive: true, force: true });
    await controller.rescan();
    expect(log.lines().some((l) => l.msg === "cannot read the manifests")).toBe(true);
    expect(controller.status().objects.map((o) => o.name)).toEqual(["alpha"]);

    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2"));
    await controller.rescan();
    await waitFor(
      "alpha at img/alpha:2",
      async () => (await api(cp.url).deployment("alpha")).source_revision_config?.image_uri === "img/alpha:2",
    );
  });
});
