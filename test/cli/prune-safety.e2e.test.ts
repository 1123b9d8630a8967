import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { diffCommand } from "../../src/cli/sync/diff.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { readPruneLedger } from "../../src/status/prune-ledger.js";
import { container, writeDoc } from "../controller/support.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// issue 23 [safety], prune: only inside the PATH read, never an emptied file, and never past a
// budget of --prune-max per --prune-window shared by successive runs. Deletions are counted on the
// control plane (DELETE requests through a proxy, and the deployments still listed).

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let root: string;
const NAMES = ["alpha", "beta", "gamma"];
const FILES = ["a.yaml", "b.yaml", "c.yaml"];

beforeEach(async () => {
  ({ cp, root } = await startPlane());
  proxy = await startHoldingProxy(cp.url);
  for (const [i, name] of NAMES.entries()) await writeDoc(root, FILES[i]!, container(name, `img/${name}:1`));
  expect(await runApply(root, applyFlags(), io())).toBe(0);
});
afterEach(async () => {
  process.exitCode = 0;
  await proxy?.close();
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

function io() {
  const captured = captureIo(cp);
  captured.env = { ...captured.env, PLUMB_API_URL: proxy.url };
  return captured;
}
const deletes = () => proxy.requests.filter((r) => r.method === "DELETE").length;
const liveNames = async () => {
  const res = await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": DEFAULT_API_KEY } });
  return ((await res.json()) as { resources: Array<{ name: string }> }).resources.map((d) => d.name).sort();
};

async function run(command: typeof planCommand | typeof diffCommand, ...args: string[]) {
  const captured = io();
  await command(captured).parseAsync(["node", "plumb", ...args]);
  const code = process.exitCode ?? 0;
  process.exitCode = 0;
  return { out: captured.out(), code };
}

describe("prune scope", () => {
  it("a single file PATH never plans, applies or diffs the deletion of another file's objects", async () => {
    const file = join(root, "a.yaml");
    const plan = await run(planCommand, file, "--prune", "--output", "json");
    expect(JSON.parse(plan.out)).toMatchObject({ summary: { delete: 0, orphan: 0 }, prune: [] });
    expect((await run(diffCommand, file)).out).not.toMatch(/beta|gamma/);
    const drift = io();
    expect(await runDrift(file, { target: [], output: "json" }, drift)).toBe(0);
    expect(drift.out()).not.toMatch(/beta|gamma/);
    expect(await runApply(file, applyFlags({ prune: true }), io())).toBe(0);
    expect(deletes()).toBe(0);
    expect(await liveNames()).toEqual(NAMES);
  });

  it("--target plans and applies never propose deleting anything else", async () => {
    const plan = await run(planCommand, root, "--prune", "--target", "alpha", "--output", "json");
    expect(JSON.parse(plan.out)).not.toMatchObject({ summary: { delete: 1 } });
    expect(plan.out).not.toMatch(/beta|gamma/);
    expect(await runApply(root, applyFlags({ prune: true, target: ["alpha"] }), io())).toBe(0);
    expect(deletes()).toBe(0);
  });

  it("a single file PATH prunes only what that file defined", async () => {
    // alpha moves out of a.yaml, which now defines delta: alpha is removed from that file.
    await writeDoc(root, "a.yaml", container("delta", "img/delta:1"));
    const file = join(root, "a.yaml");
    expect((await run(planCommand, file, "--prune")).out).toMatch(/- delete Deployment alpha/);
    expect(await runApply(file, applyFlags({ prune: true }), io())).toBe(0);
    expect(deletes()).toBe(1);
    expect(await liveNames()).toEqual(["beta", "delta", "gamma"]);
  });
});

const EMPTIED: Record<string, string> = {
  truncated: "",
  "comments only": "# nothing here yet\n# (moved?)\n",
  "separators only": "---\n---\n",
  "a git-lfs pointer": `version https://git-lfs.github.com/spec/v1\noid sha256:${"4d7a2146".repeat(8)}\nsize 512\n`,
  "a merge-conflict marker": "<<<<<<< HEAD\n",
  "another tool's kind only": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta\n",
};

describe("emptied files", () => {
  for (const [shape, text] of Object.entries(EMPTIED)) {
    it(`a file ${shape} is manifest-emptied: plan fails, apply --prune deletes nothing`, async () => {
      await writeFile(join(root, "b.yaml"), text);
      const plan = await run(planCommand, root, "--prune");
      expect(plan.code).toBe(1);
      expect(plan.out).toContain("b.yaml:1:1: error:");
      expect(plan.out).toContain("Deployment beta");
      expect(plan.out).toContain("[manifest-emptied]");
      expect(await runApply(root, applyFlags({ prune: true }), io())).toBe(1);
      expect(deletes()).toBe(0);
      expect(await liveNames()).toEqual(NAMES);
    });
  }

  it("a file that fails to parse is no removal either", async () => {
    await writeFile(join(root, "b.yaml"), "apiVersion: plumb/v1\nkind: [\n");
    expect(await runApply(root, applyFlags({ prune: true }), io())).toBe(1);
    expect(deletes()).toBe(0);
  });

  it("a deleted file is a removal", async () => {
    await rm(join(root, "b.yaml"));
    expect(await runApply(root, applyFlags({ prune: true }), io())).toBe(0);
    expect(deletes()).toBe(1);
  });
});

describe("prune budget", () => {
  it("counts deletions across runs in the window; an explicit --prune-max lifts it once", async () => {
    for (let i = 0; i < 4; i++) await writeDoc(root, `x${i}.yaml`, container(`extra${i}`, "img/x:1"));
    expect(await runApply(root, applyFlags(), io())).toBe(0);
    // 3 deletions, then 3 more: 6 > 5 in one hour, though each run alone is under the max.
    for (const file of ["x0.yaml", "x1.yaml", "x2.yaml"]) await rm(join(root, file));
    expect(await runApply(root, applyFlags({ prune: true }), io())).toBe(0);
    expect(deletes()).toBe(3);
    for (const file of ["x3.yaml", "b.yaml", "c.yaml"]) await rm(join(root, file));
    await expect(runApply(root, applyFlags({ prune: true }), io())).rejects.toMatchObject({
      code: "prune-limit",
      message: expect.stringMatching(
        /would delete 3 deployments \(beta, extra3, gamma\), and 3 were deleted in the last 1h/,
      ),
    });
    expect(deletes()).toBe(3);
    // The operator reviewed them: an explicit --prune-max lifts the count for this apply.
    expect(await runApply(root, applyFlags({ prune: true, pruneMax: 3 }), io())).toBe(0);
    expect(deletes()).toBe(6);
    expect(await liveNames()).toEqual(["alpha"]);
    expect((await readPruneLedger(join(root, ".plumb", "status"))).map((e) => e.name).sort()).toEqual([
      "beta",
      "extra0",
      "extra1",
      "extra2",
      "extra3",
      "gamma",
    ]);
  });
});
