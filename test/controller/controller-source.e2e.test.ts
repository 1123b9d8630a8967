import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// internal_source under the controller: the source directory is packed and uploaded like `apply`
// does, and saving a file inside it (manifest untouched) reconciles that deployment only.

let dir: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-src-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

async function writeSource(version: string) {
  await mkdir(join(dir, "agent", "src"), { recursive: true });
  await writeFile(join(dir, "agent", "package.json"), '{"name": "agent", "type": "module"}\n');
  await writeFile(join(dir, "agent", "langgraph.json"), '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
  await writeFile(join(dir, "agent", "src", "agent.ts"), `export const version = "${version}";\n`);
}

describe("controller with an internal_source deployment", () => {
  it("uploads the source at start, and re-uploads only that deployment when a source file is saved", async () => {
    await writeSource("1");
    await writeDoc(dir, "docs.yaml", {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "docs" },
      spec: {
        source: "internal_source",
        source_path: "./agent",
        source_config: { install_command: "npm install", build_command: "npm run build" },
        source_revision_config: { graph_config_path: "langgraph.json" },
      },
    });
    await writeDoc(dir, "other.yaml", container("other", "img/other:1"));
    const log = memoryLogger();
    controller = await startController({
      source: { kind: "dir", dir },
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
      selfHeal: false,
      concurrency: 4,
      debounceMs: 30,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      maxPollIntervalMs: 50,
      env: { PATH: process.env.PATH },
      logger: log.logger,
    });
    await waitFor("ready", () => controller!.ready());
    const docs = () => controller!.status().objects.find((o) => o.name === "docs");
    expect(docs()).toMatchObject({ sync: "Synced", revision_status: "DEPLOYED" });
    const firstUpload = docs()!.source_upload!;
    const client = api(cp.url);
    const live = await client.deployment("docs");
    expect(live.source_revision_config.source_tarball_path).toBe(firstUpload.object_path);
    const otherRevisions = (await client.revisions((await client.deployment("other")).id)).length;

    await writeSource("2"); // only a source file changes
    await waitFor("new upload deployed", () => {
      const now = docs();
      return now?.source_upload?.digest !== firstUpload.digest && now?.revision_status === "DEPLOYED";
    });
    const after = await client.deployment("docs");
    expect(after.source_revision_config.source_tarball_path).toBe(docs()!.source_upload!.object_path);
    expect(after.source_revision_config.source_tarball_path).not.toBe(firstUpload.object_path);
    expect((await client.revisions((await client.deployment("other")).id)).length).toBe(otherRevisions);
  });
});
