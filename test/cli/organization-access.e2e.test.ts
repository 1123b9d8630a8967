import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// OrganizationAccess against the local control plane's platform API, through a proxy that counts
// the requests and can change what the platform answers.

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let root: string;
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const INFO = "/api/v1/organizations/current/info";
const doc = (spec: string) =>
  `apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata:\n  name: acme\nspec:\n${spec}\n`;

const io = () => {
  const captured = captureIo(cp);
  captured.env = { ...captured.env, PLUMB_API_URL: proxy.url, PLUMB_PLATFORM_URL: proxy.url };
  return captured;
};

const patches = () => proxy.requests.filter((r) => r.method === "PATCH" && r.url === INFO).length;

describe("OrganizationAccess apply", () => {
  it("a PATCH the platform accepts but answers with the old settings fails, recorded as not synced", async () => {
    // Taken as sent, apply said "converged" and recorded Synced, and the next plan (the controller
    // on every pass) sent the same PATCH again.
    ({ cp, root } = await startPlane());
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "PATCH" && url === INFO
          ? Buffer.from(
              JSON.stringify({ ...JSON.parse(body.toString("utf8")), jit_provisioning_enabled: true }),
            )
          : body,
    });
    await writeFile(
      join(root, "org.yaml"),
      doc("  jit_provisioning_enabled: false\n  invites_enabled: true"),
    );
    const captured = io();
    expect(await runApply(root, applyFlags(), captured)).toBe(1);
    expect(patches()).toBe(1);
    expect(captured.out() + captured.err()).toContain(
      "answered jit_provisioning_enabled true (sent false): the setting did not take",
    );
    const record = (await loadStatusStore(join(root, ".plumb", "status"))).objects.get(
      "OrganizationAccess/acme",
    );
    expect(record?.sync).not.toBe("Synced");
    expect(record?.last_error).toContain("did not take");
  });

  it("a removed OrganizationAccess manifest is no longer managed: apply --prune sends nothing to the organization", async () => {
    // There is nothing to delete or reset: the settings stay as they are.
    ({ cp, root } = await startPlane());
    proxy = await startHoldingProxy(cp.url);
    await writeFile(join(root, "org.yaml"), doc("  invites_enabled: false"));
    expect(await runApply(root, applyFlags(), io())).toBe(0);
    expect(patches()).toBe(1);
    await rm(join(root, "org.yaml"));
    await writeFile(
      join(root, "alpha.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/a:1\n",
    );
    const before = proxy.requests.length;
    // Said in the plan; without --prune the record stays (its settings are kept either way).
    const record = join(root, ".plumb", "status", "organizationaccess.acme.json");
    const plan = io();
    await planCommand(plan).parseAsync(["node", "plan", root]);
    process.exitCode = 0;
    expect(plan.out()).toContain(
      "acme removed from git (kept: an organization's settings cannot be deleted: they stay as they are; apply --prune stops managing them",
    );
    expect(await runApply(root, applyFlags(), io())).toBe(0);
    expect(existsSync(record)).toBe(true);
    // With --prune its record is dropped (it stayed for ever), and nothing is sent.
    const pruned = io();
    expect(await runApply(root, applyFlags({ prune: true }), pruned)).toBe(0);
    expect(pruned.out()).toContain("- OrganizationAccess acme: no longer managed");
    expect(existsSync(record)).toBe(false);
    expect(proxy.requests.slice(before).filter((r) => r.url.startsWith("/api/"))).toEqual([]);
    const live = (await (
      await fetch(`${cp.url}${INFO}`, { headers: { authorization: `Bearer ${DEFAULT_API_KEY}` } })
    ).json()) as { invites_enabled: boolean };
    expect(live.invites_enabled).toBe(false);
  });

  it("a platform URL with no platform API behind it (404) is said as the setting to fix", async () => {
    // It was "GET /api/v1/organizations/current/info failed: 404 — Not Found": neither the URL
    // nor the setting was named (a platform URL written with /api/v1 asks for /api/v1/api/v1/...).
    ({ cp, root } = await startPlane());
    proxy = await startHoldingProxy(cp.url);
    await writeFile(join(root, "org.yaml"), doc("  invites_enabled: false"));
    for (const [given, advice] of [
      [`${proxy.url}/api/v1`, `use the base URL without /api/v1: ${proxy.url}`],
      [`${proxy.url}/nothing`, "use the platform API's base URL, without a path"],
    ]) {
      const captured = io();
      captured.env = { ...captured.env, PLUMB_PLATFORM_URL: given };
      const before = proxy.requests.length;
      const planned = planCommand(captured).parseAsync(["node", "plan", root]);
      await expect(planned).rejects.toMatchObject({ code: "api-config" });
      await expect(planned).rejects.toThrow(
        `the platform URL ${given} looks wrong: GET ${given}${INFO} answered 404`,
      );
      await expect(planned).rejects.toThrow(advice);
      process.exitCode = 0;
      expect(proxy.requests.slice(before).filter((r) => r.url.endsWith(INFO))).toHaveLength(1);
    }
  });
});
