import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { api, container, internalSource, memoryLogger, waitFor, writeDoc } from "./support.js";

// internal_source under the controller: the source directory is packed and uploaded like `apply`
// does, and saving a file inside it (manifest untouched) reconciles that deployment only.

const h = useControllerHarness("plumb-ctl-src-");

async function writeSource(version: string) {
  await mkdir(join(h.dir, "agent", "src"), { recursive: true });
  await writeFile(join(h.dir, "agent", "package.json"), '{"name": "agent", "type": "module"}\n');
  await writeFile(join(h.dir, "agent", "langgraph.json"), '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
  await writeFile(join(h.dir, "agent", "src", "agent.ts"), `export const version = "${version}";\n`);
}

describe("controller with an internal_source deployment", () => {
  it("uploads the source at start, and re-uploads only that deployment when a source file is saved", async () => {
    await writeSource("1");
    await writeDoc(h.dir, "docs.yaml", internalSource("docs", "./agent"));
    await writeDoc(h.dir, "other.yaml", container("other", "img/other:1"));
    const log = memoryLogger();
    h.controller = await startController(
      fastControllerOptions(h.cp, {
        source: { kind: "dir", dir: h.dir },
        concurrency: 4,
        env: { PATH: process.env.PATH },
        logger: log.logger,
      }),
    );
    await waitFor("ready", () => h.controller!.ready());
    const docs = () => h.controller!.status().objects.find((o) => o.name === "docs");
    expect(docs()).toMatchObject({ sync: "Synced", revision_status: "DEPLOYED" });
    const firstUpload = docs()!.source_upload!;
    const client = api(h.cp.url);
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
