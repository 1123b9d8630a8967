import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "../harness.js";
import { container, memoryLogger, waitFor, writeDoc } from "../support.js";

// A new pod without durable status: the controller says once, at startup, whose secrets it will re-send.

const h = useControllerHarness("plumb-unknown-secrets-");

it("warns once at startup when live deployments with secrets have no recorded fingerprints", async () => {
  const secrets = [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }];
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  const options = fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, env: { TOKEN: "v" } });
  const first = memoryLogger();
  h.controller = await startController({ ...options, logger: first.logger });
  await waitFor("ready", () => h.controller!.ready());
  expect(first.text()).not.toContain("no recorded secret fingerprints"); // nothing live yet
  await h.controller.stop(1_000);

  await rm(join(h.dir, ".plumb"), { recursive: true, force: true }); // the pod's emptyDir is gone
  const second = memoryLogger();
  h.controller = await startController({ ...options, logger: second.logger });
  await waitFor("ready", () => h.controller!.ready());
  const warnings = second.lines().filter((l) => String(l.msg).startsWith("no recorded secret fingerprints"));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatchObject({ deployments: 1, names: ["alpha"], level: 40 });
});
