import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// A saved plan of an OrganizationAccess is the plan of one organization: applied where the
// platform API is another organization's (another PLUMB_PLATFORM_URL or key), it is stale.

const planes: RunningControlPlane[] = [];
let root: string;
afterEach(async () => {
  for (const cp of planes.splice(0)) await cp.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const io = (cp: RunningControlPlane) => {
  const captured = captureIo(cp);
  captured.env = { ...captured.env, PLUMB_PLATFORM_URL: cp.url };
  return captured;
};

const organization = async (cp: RunningControlPlane) =>
  (await (
    await fetch(`${cp.url}/api/v1/organizations/current/info`, {
      headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
    })
  ).json()) as { id: string; jit_provisioning_enabled: boolean; invites_enabled: boolean };

describe("saved plan of an OrganizationAccess", () => {
  it("applied against another organization with the same settings: stale, nothing sent", async () => {
    // The plan kept a digest of the two settings only: another organization with the same
    // settings passed, and apply --plan PATCHed an organization the reviewed plan never showed.
    const reviewed = await startPlane();
    const other = await startPlane();
    planes.push(reviewed.cp, other.cp);
    await rm(other.root, { recursive: true, force: true });
    root = reviewed.root;
    const planDir = await mkdtemp(join(tmpdir(), "plumb-plan-"));
    const planFile = join(planDir, "org.plan.json");
    try {
      const doc =
        "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata:\n  name: acme\nspec:\n  jit_provisioning_enabled: false\n";
      await writeFile(join(root, "org.yaml"), doc);
      const before = await organization(other.cp);
      expect(before.jit_provisioning_enabled).toBe(true);
      expect((await organization(reviewed.cp)).jit_provisioning_enabled).toBe(true);
      await planCommand(io(reviewed.cp)).parseAsync(["node", "plan", root, "--out", planFile]);
      process.exitCode = 0;
      const applied = runApply(root, applyFlags({ plan: planFile }), io(other.cp));
      await expect(applied).rejects.toMatchObject({ code: "plan-stale" });
      await expect(applied).rejects.toThrow("OrganizationAccess: live organization");
      expect(await organization(other.cp)).toEqual(before);
      // Against the organization it was made for, the same plan applies.
      expect(await runApply(root, applyFlags({ plan: planFile }), io(reviewed.cp))).toBe(0);
      expect((await organization(reviewed.cp)).jit_provisioning_enabled).toBe(false);
    } finally {
      await rm(planDir, { recursive: true, force: true });
    }
  });
});
