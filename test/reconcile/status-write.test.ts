import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { openSession, planSession } from "../../src/reconcile/session.js";
import { writeRefreshedStatus } from "../../src/reconcile/status-write.js";
import { applyFlags, captureIo, startPlane } from "../cli/reconcile-helpers.js";
import { call, containerDoc, writeManifests } from "./harness.js";

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

async function refresh(root: string, plane: RunningControlPlane) {
  const io = captureIo(plane);
  const session = await openSession(root, {}, io);
  const result = await planSession(session, io, []);
  if (!result.ok) throw new Error("manifests should be valid");
  return writeRefreshedStatus(session, result);
}

describe("writeRefreshedStatus (the engine behind drift and status)", () => {
  it("writes each record refreshed against live", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("w-one", "registry.example/one:1")]);
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    const file = join(started.root, ".plumb/status/deployment.w-one.json");
    const id = JSON.parse(await readFile(file, "utf8")).id as string;
    const patched = await call(cp, "PATCH", `/v2/deployments/${id}`, {
      source_revision_config: { image_uri: "registry.example/one:2" },
    });
    expect(patched.status).toBe(200);

    const records = await refresh(started.root, cp);
    expect(records.map((r) => [r.name, r.sync])).toEqual([["w-one", "OutOfSync"]]);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ id, sync: "OutOfSync" });
  });
});
