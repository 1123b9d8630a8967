import { afterEach, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { runApply } from "../../src/cli/sync/apply.js";
import { statusCommand } from "../../src/cli/sync/status.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { call, containerDoc, writeManifests } from "../reconcile/harness.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
  process.exitCode = undefined;
});

describe("plumb status", () => {
  it("shows the store refreshed against live: a failed out-of-band revision is OutOfSync and Degraded", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [
      containerDoc("s-one", "registry.example/one:1"),
      containerDoc("s-two", "registry.example/two:1"),
    ]);
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    const id = (await loadStatusStore(`${started.root}/.plumb/status`)).objects.get("Deployment/s-one")!.id!;
    const patched = await call(cp, "PATCH", `/v2/deployments/${id}`, {
      source_revision_config: { image_uri: "registry.example/fail-build:2" },
    });
    expect(patched.status).toBe(200);

    const io = captureIo(cp);
    await statusCommand(io).parseAsync(["node", "status", started.root, "--output", "json"]);
    const { objects } = JSON.parse(io.out());
    const one = objects.find((o: { name: string }) => o.name === "s-one");
    expect(one).toMatchObject({ sync: "OutOfSync", health: "Degraded", revision_status: "BUILD_FAILED" });
    expect(one.latest_revision_id).not.toBe(one.active_revision_id);
    expect(objects.find((o: { name: string }) => o.name === "s-two")).toMatchObject({
      sync: "Synced",
      health: "Healthy",
    });

    const text = captureIo(cp);
    await statusCommand(text).parseAsync(["node", "status", started.root]);
    expect(text.out()).toMatch(/Deployment\/s-one\s+OutOfSync\s+Degraded\s+BUILD_FAILED/);
    expect(process.exitCode).toBe(0);
  });

  it("a deployment deleted out of band is missing: no stale revision status, ids cleared; apply brings it back", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("s-gone", "registry.example/gone:1")]);
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    const id = (await loadStatusStore(`${started.root}/.plumb/status`)).objects.get("Deployment/s-gone")!.id!;
    expect((await call(cp, "DELETE", `/v2/deployments/${id}`)).status).toBe(204);

    const io = captureIo(cp);
    await statusCommand(io).parseAsync(["node", "status", started.root, "--output", "json"]);
    const [gone] = JSON.parse(io.out()).objects;
    expect(gone).toMatchObject({
      id,
      sync: "OutOfSync",
      health: "Unknown",
      revision_status: null,
      latest_revision_id: null,
      active_revision_id: null,
    });
    expect(gone.last_error).toMatch(/^missing: deployment .* is no longer on the control plane/);

    const text = captureIo(cp);
    await statusCommand(text).parseAsync(["node", "status", started.root]);
    expect(text.out()).not.toContain("DEPLOYED");
    expect(text.out()).toMatch(/Deployment\/s-gone\s+OutOfSync\s+Unknown\s+-\s+-\s+-\s+\S+\s+missing: /);

    // Apply creates it again; the missing note goes with the next refresh.
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    const again = captureIo(cp);
    await statusCommand(again).parseAsync(["node", "status", started.root, "--output", "json"]);
    expect(JSON.parse(again.out()).objects[0]).toMatchObject({
      sync: "Synced",
      health: "Healthy",
      revision_status: "DEPLOYED",
      last_error: null,
    });
  });

  it("is registered with apply and drift", async () => {
    const names = (await buildProgram()).commands.map((c) => c.name());
    expect(names).toEqual(expect.arrayContaining(["apply", "drift", "status"]));
  });
});
