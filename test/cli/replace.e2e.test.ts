import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { api, writeDoc } from "../controller/support.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// Replace: an immutable-field change (here the listener namespace) stays refused by default; with
// --replace NAME or plumb/replace: allowed, plan shows -/+ replace and apply deletes the
// deployment, waits until it is gone, and creates it again under the same name.

let cp: RunningControlPlane;
let root: string;
afterEach(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const agent = (namespace: string, annotations?: Record<string, string>) => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name: "edge", ...(annotations ? { annotations } : {}) },
  spec: {
    source: "external_container",
    source_config: { listener_id: DEFAULT_LISTENER_ID, listener_config: { k8s_namespace: namespace } },
    source_revision_config: { image_uri: "img/edge:1" },
  },
});

async function plan(...args: string[]) {
  const io = captureIo(cp);
  await planCommand(io).parseAsync(["node", "plan", root, ...args]);
  const code = process.exitCode;
  process.exitCode = 0;
  return { code, out: io.out() };
}

describe("replace", () => {
  it("refused by default; --replace NAME plans -/+ replace and apply deletes then creates it again", async () => {
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    await writeDoc(root, "edge.yaml", agent("agents"));
    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    const before = await api(cp.url).deployment("edge");
    await writeDoc(root, "edge.yaml", agent("agents-v2"));

    const refused = await plan();
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("! refused Deployment edge");
    await expect(runApply(root, applyFlags(), captureIo(cp))).resolves.toBe(1);

    const replaced = await plan("--replace", "edge");
    expect(replaced.code).toBe(0);
    expect(replaced.out).toContain("! -/+ replace Deployment edge");
    expect(replaced.out).toContain("downtime, and a new id");
    const json = JSON.parse((await plan("--replace", "edge", "--output", "json")).out) as {
      summary: Record<string, number>;
      changes: Array<{ action: string; replaces: { id: string; fields: string[] } }>;
    };
    expect(json.summary).toMatchObject({ create: 1, refused: 0, replace: 1 });
    expect(json.changes[0]).toMatchObject({
      action: "create",
      replaces: { id: before.id, fields: ["source_config.listener_config.k8s_namespace"] },
    });

    const io = captureIo(cp);
    expect(await runApply(root, applyFlags({ replace: ["edge"] }), io)).toBe(0);
    expect(io.out()).toContain(`- replace: Deployment edge (${before.id}): deleted`);
    const after = await api(cp.url).deployment("edge");
    expect(after.id).not.toBe(before.id);
    expect(after.source_config.listener_config?.k8s_namespace).toBe("agents-v2");
    const record = (await loadStatusStore(join(root, ".plumb", "status"))).objects.get("Deployment/edge");
    expect(record?.id).toBe(after.id);
  });

  it("a plan saved with --replace is applied only with the same --replace", async () => {
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    await writeDoc(root, "edge.yaml", agent("agents"));
    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    const before = await api(cp.url).deployment("edge");
    await writeDoc(root, "edge.yaml", agent("agents-v2"));
    const planFile = `${root}.replace-plan.json`;
    try {
      await plan("--replace", "edge", "--out", planFile);
      await expect(runApply(root, applyFlags({ plan: planFile }), captureIo(cp))).rejects.toMatchObject({
        code: "usage",
        message: expect.stringContaining("replaces edge: apply it with the same --replace"),
      });
      expect(await runApply(root, applyFlags({ plan: planFile, replace: ["edge"] }), captureIo(cp))).toBe(0);
      expect((await api(cp.url).deployment("edge")).id).not.toBe(before.id);
    } finally {
      await rm(planFile, { force: true });
    }
  });

  it("the annotation plumb/replace: allowed does the same without the flag", async () => {
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    await writeDoc(root, "edge.yaml", agent("agents"));
    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    await writeDoc(root, "edge.yaml", agent("agents-v2", { "plumb/replace": "allowed" }));
    expect((await plan()).out).toContain("-/+ replace Deployment edge");
  });
});
