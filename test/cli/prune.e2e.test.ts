import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { api, container, writeDoc } from "../controller/support.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// Prune: plan lists managed deployments whose manifests were removed; apply --prune deletes them
// (and their records), never a deployment plumb did not create, never one marked
// plumb/prune: disabled, and never more than --prune-max at once.

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let root: string;
beforeEach(async () => {
  ({ cp, root } = await startPlane());
  proxy = await startHoldingProxy(cp.url);
  await writeDoc(root, "a.yaml", container("alpha", "img/alpha:1"));
  await writeDoc(root, "b.yaml", container("beta", "img/beta:1"));
  await writeDoc(root, "c.yaml", container("gamma", "img/gamma:1"));
  expect(await runApply(root, applyFlags(), io())).toBe(0);
  // Made by hand, outside plumb: no status record.
  await fetch(`${cp.url}/v2/deployments`, {
    method: "POST",
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({
      name: "manual",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/manual:1" },
      secrets: [],
    }),
  });
});
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

function io() {
  const captured = captureIo(cp);
  captured.env = { PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY, NO_COLOR: "1" };
  return captured;
}
const exists = async (name: string) => {
  const res = await fetch(`${cp.url}/v2/deployments?name_contains=${name}`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  const body = (await res.json()) as { resources: Array<{ name: string }> };
  return body.resources.some((d) => d.name === name);
};
const records = async () =>
  [...(await loadStatusStore(join(root, ".plumb", "status"))).objects.keys()].sort();
const writes = () => proxy.requests.filter((r) => r.method !== "GET").length;

async function plan(...args: string[]) {
  const captured = io();
  await planCommand(captured).parseAsync(["node", "plan", root, ...args]);
  process.exitCode = 0;
  return captured.out();
}

describe("prune", () => {
  it("plan lists a removed manifest as kept; apply keeps it; apply --prune deletes it and its record, never the unmanaged one", async () => {
    await rm(join(root, "b.yaml"));
    expect(await plan()).toContain("- beta removed from git (kept; apply --prune deletes it)");
    const json = JSON.parse(await plan("--output", "json")) as {
      summary: Record<string, number>;
      prune: unknown[];
    };
    expect(json.summary).toMatchObject({ orphan: 1, delete: 0 });
    expect(json.prune).toEqual([
      { kind: "Deployment", name: "beta", id: expect.any(String), action: "orphan" },
    ]);
    expect(await plan("--output", "markdown")).toContain(
      "- `beta` removed from git (kept; apply --prune deletes it)",
    );

    expect(await runApply(root, applyFlags(), io())).toBe(0);
    expect(await exists("beta")).toBe(true);

    expect(await plan("--output", "json")).toContain('"orphan": 1');
    const captured = io();
    expect(await runApply(root, applyFlags({ prune: true }), captured)).toBe(0);
    expect(captured.out()).toMatch(/- Deployment beta \(.*\): deleted/);
    expect(await exists("beta")).toBe(false);
    expect(await exists("manual")).toBe(true);
    expect(await exists("alpha")).toBe(true);
    expect(await records()).toEqual(["Deployment/alpha", "Deployment/gamma"]);
  });

  it("refuses the whole apply with zero writes when it would delete more than --prune-max", async () => {
    await rm(join(root, "b.yaml"));
    await rm(join(root, "c.yaml"));
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2")); // a change that must not go out either
    const before = writes();
    await expect(runApply(root, applyFlags({ prune: true, pruneMax: 1 }), io())).rejects.toMatchObject({
      code: "prune-limit",
      message: expect.stringContaining("would delete 2 deployments (beta, gamma), more than --prune-max 1"),
    });
    expect(writes()).toBe(before);
    expect(await exists("beta")).toBe(true);
    expect((await api(cp.url).deployment("alpha")).source_revision_config.image_uri).toBe("img/alpha:1");
  });

  it("a plan saved with --prune is applied with --prune, deleting what it listed", async () => {
    await rm(join(root, "b.yaml"));
    const planFile = join(root, "..", `${root.split("/").at(-1)}.prune-plan.json`);
    try {
      const out = await plan("--prune", "--out", planFile);
      expect(out).toMatch(/- delete Deployment beta \(.*\): removed from git/);
      await expect(runApply(root, applyFlags({ plan: planFile }), io())).rejects.toMatchObject({
        code: "usage",
      });
      expect(await runApply(root, applyFlags({ plan: planFile, prune: true }), io())).toBe(0);
      expect(await exists("beta")).toBe(false);
    } finally {
      await rm(planFile, { force: true });
    }
  });

  it("never prunes a deployment whose manifest said plumb/prune: disabled", async () => {
    const kept = container("beta", "img/beta:1");
    await writeDoc(root, "b.yaml", {
      ...kept,
      metadata: { name: "beta", annotations: { "plumb/prune": "disabled" } },
    });
    expect(await runApply(root, applyFlags(), io())).toBe(0);
    await rm(join(root, "b.yaml"));
    expect(await plan()).toContain("beta removed from git (kept: its manifest said plumb/prune: disabled)");
    expect(await runApply(root, applyFlags({ prune: true }), io())).toBe(0);
    expect(await exists("beta")).toBe(true);
  });
});
