import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// A deployment being deleted (AWAITING_DELETE) is not changed: the control plane refuses every
// PATCH to it (400) and a create of its name (409) until it is gone.

let cp: RunningControlPlane;
let proxy: HoldingProxy | undefined;
let root: string;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const manifest = (image: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: ${image}\n`;

describe("a deployment being deleted", () => {
  it("is planned as refused, saying so, and apply sends it nothing", async () => {
    // Planned as a PATCH, apply sent it and failed on the control plane's 400, which said nothing
    // of why or what happens next.
    ({ cp, root } = await startPlane({ deploymentReadySeconds: 3_600 }));
    await writeFile(join(root, "alpha.yaml"), manifest("img/alpha:1"));
    expect(await runApply(root, applyFlags({ wait: false }), captureIo(cp))).toBe(0);
    const headers = { "x-api-key": DEFAULT_API_KEY };
    const listed = (await (await fetch(`${cp.url}/v2/deployments`, { headers })).json()) as {
      resources: Array<{ id: string }>;
    };
    const id = listed.resources[0]!.id;
    expect((await fetch(`${cp.url}/v2/deployments/${id}`, { method: "DELETE", headers })).status).toBe(204);
    await writeFile(join(root, "alpha.yaml"), manifest("img/alpha:2"));
    proxy = await startHoldingProxy(cp.url);
    const io = () => {
      const captured = captureIo(cp);
      captured.env = { ...captured.env, PLUMB_API_URL: proxy!.url };
      return captured;
    };
    const plan = io();
    await planCommand(plan).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    const change = (JSON.parse(plan.out()) as { changes: Array<Record<string, unknown>> }).changes[0]!;
    expect(change).toMatchObject({ action: "refused", request: null, id });
    expect(JSON.stringify(change.errors)).toContain(
      `deployment alpha (${id}) is being deleted (AWAITING_DELETE): nothing is sent to it; once it is gone, apply creates it again`,
    );
    const applied = io();
    expect(await runApply(root, applyFlags({ wait: false }), applied)).toBe(1);
    expect(applied.out()).toContain("is being deleted (AWAITING_DELETE)");
    expect(proxy.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });
});
