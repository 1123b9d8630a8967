import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// What is fatal at startup (a manifest root that is not there) and what is only reported later (the
// directory vanishing under a running controller).

const h = useControllerHarness("plumb-ctl-start-");

const start = (root: string, log = memoryLogger()) =>
  startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: root },
      statusDir: join(h.dir, "status"),
      logger: log.logger,
    }),
  );

describe("controller startup", () => {
  it("refuses a manifest directory that does not exist", async () => {
    const missing = join(h.dir, "nope");
    await expect(start(missing)).rejects.toMatchObject({
      code: "path-not-found",
      message: `manifest directory ${missing} does not exist; check --dir`,
    });
  });

  it("refuses a file given as the manifest directory", async () => {
    await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
    await expect(start(join(h.dir, "a.yaml"))).rejects.toMatchObject({ code: "path-not-directory" });
    expect(await api(h.cp.url).deployments()).toEqual([]);
  });

  it("reports a directory that disappears later and keeps running", async () => {
    const root = join(h.dir, "manifests");
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:1"));
    const log = memoryLogger();
    h.controller = await start(root, log);
    await waitFor("ready", () => h.controller!.ready());
    await rm(root, { recursive: true, force: true });
    await h.controller.rescan();
    expect(log.lines().some((l) => l.msg === "cannot read the manifests")).toBe(true);
    expect(h.controller.status().objects.map((o) => o.name)).toEqual(["alpha"]);

    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2"));
    await h.controller.rescan();
    await waitFor(
      "alpha at img/alpha:2",
      async () =>
        (await api(h.cp.url).deployment("alpha")).source_revision_config?.image_uri === "img/alpha:2",
    );
  });
});
