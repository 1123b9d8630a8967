import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { digestSource } from "../../src/manifest/source/source-digest.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// Under the controller an internal_source upload leaves out what `apply` leaves out: another
// deployment's secret file inside the source directory (and a link to it), .env files, .git. The
// digest recorded for the upload is the one apply packed and checked, so it tells what was sent.

const h = useControllerHarness("plumb-ctl-src-only-");

const FILES: Record<string, string> = {
  "package.json": '{"name": "agent", "type": "module"}\n',
  "langgraph.json": '{"graphs": {"agent": "./src/agent.ts:graph"}}\n',
  "src/agent.ts": 'export const version = "1";\n',
};

describe("controller: an internal_source upload holds only the source", () => {
  it("leaves out another deployment's secret file, a link to it, .env and .git", async () => {
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(join(h.dir, "agent", path, ".."), { recursive: true });
      await writeFile(join(h.dir, "agent", path), text);
    }
    await mkdir(join(h.dir, "agent", "config"));
    await writeFile(join(h.dir, "agent", "config", "token.txt"), "canary-token\n");
    await symlink("config/token.txt", join(h.dir, "agent", "token-link"));
    await writeFile(join(h.dir, "agent", ".env"), "KEY=canary-env\n");
    await mkdir(join(h.dir, "agent", ".git"));
    await writeFile(join(h.dir, "agent", ".git", "config"), "canary-git\n");
    await writeDoc(h.dir, "docs.yaml", {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "docs" },
      spec: {
        source: "internal_source",
        source_path: "./agent",
        source_revision_config: { graph_config_path: "langgraph.json" },
      },
    });
    await writeDoc(
      h.dir,
      "other.yaml",
      container("other", "img/other:1", {
        secrets: [{ name: "TOKEN", valueFrom: { file: "./agent/config/token.txt" } }],
      }),
    );
    h.controller = await startController(
      fastControllerOptions(h.cp, {
        source: { kind: "dir", dir: h.dir },
        env: { PATH: process.env.PATH },
        logger: memoryLogger().logger,
      }),
    );
    await waitFor("ready", () => h.controller!.ready());
    const docs = h.controller.status().objects.find((o) => o.name === "docs");
    expect(docs).toMatchObject({ sync: "Synced", revision_status: "DEPLOYED" });
    const expected = digestSource(
      Object.entries(FILES).map(([path, text]) => ({ path, mode: 0o644 as const, bytes: Buffer.from(text) })),
    );
    expect(docs!.source_upload!.digest).toBe(expected);
  });
});
