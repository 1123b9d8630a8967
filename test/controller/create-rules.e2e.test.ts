import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// The controller checks a create against the installation's rules as plan does
// (docs/plan.md "Installation rules"): refused with file:line, nothing sent, the others go on.
const h = useControllerHarness("plumb-ctl-rules-");

describe("controller creates and the installation's rules", () => {
  it("refuses external_container on a SaaS control plane with file:line; reconciles the rest", async () => {
    await writeDoc(h.dir, "ok.yaml", container("fine", "img/fine:1"));
    await writeDoc(h.dir, "ops.yaml", {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "ops" },
      spec: {
        source: "external_container",
        source_config: { listener_id: "10000000-0000-4000-8000-000000000001" },
        source_revision_config: { image_uri: "img/ops:1" },
      },
    });
    const log = memoryLogger();
    h.controller = await startController(
      fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, logger: log.logger }),
    );
    await waitFor(
      "fine created",
      async () =>
        (await api(h.cp.url)
          .deployment("fine")
          .catch(() => null)) !== null,
    );
    await waitFor("ops refused", () =>
      h.controller!.status().objects.find((o) => o.name === "ops" && o.last_error !== null),
    );
    const ops = h.controller.status().objects.find((o) => o.name === "ops")!;
    expect(ops.last_error).toMatch(
      /ops\.yaml:\d+:\d+: source external_container is only available on self-hosted installations; this control plane is saas .*\[source-not-in-mode\]/,
    );
    expect(
      await api(h.cp.url)
        .deployment("ops")
        .catch(() => null),
    ).toBeNull(); // nothing was sent
    expect(log.lines().some((l) => l.msg === "reconcile failed" && l.object === "ops")).toBe(true);
  });
});
