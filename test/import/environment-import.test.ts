import { describe, expect, it } from "vitest";
import type { BuiltManifest } from "../../src/import/build-manifest.js";
import { planEnvironmentImport } from "../../src/import/environment-import.js";

const built = (name: string): BuiltManifest => ({
  manifest: { apiVersion: "plumb/v1", kind: "Deployment", metadata: { name }, spec: { source: "gitrepo" } },
  notes: [],
});
const live = (...names: string[]) => names.map((liveName) => ({ liveName, built: built(liveName) }));
const staging = { name: "staging", nameSuffix: "-staging", addedByDefaults: () => [] };

describe("planEnvironmentImport", () => {
  it("names a deployment without the suffix and runs it only in the environment", () => {
    const plan = planEnvironmentImport(live("hotfix-staging"), staging, new Map());
    expect(plan.write).toEqual([expect.objectContaining({ name: "hotfix", liveName: "hotfix-staging" })]);
    expect(plan.write[0]!.built.manifest.metadata).toEqual({ name: "hotfix", environments: ["staging"] });
  });

  it("leaves what the repository defines, and names without the suffix (or only the suffix), to plan", () => {
    const plan = planEnvironmentImport(
      live("support-agent-staging", "scratch", "-staging"),
      staging,
      new Map([["support-agent", "saas/support-agent.yaml:7"]]),
    );
    expect(plan.write).toEqual([]);
    expect(plan.skipped.map((s) => s.liveName)).toEqual(["support-agent-staging", "scratch", "-staging"]);
    expect(plan.skipped[0]!.reason).toContain("already defined at saas/support-agent.yaml:7");
  });

  it("without a suffix keeps the live name, and notes what the defaults would add", () => {
    const prod = { name: "prod", addedByDefaults: () => ["source_config"] };
    const plan = planEnvironmentImport(live("billing"), prod, new Map());
    expect(plan.write[0]!.name).toBe("billing");
    expect(plan.write[0]!.built.notes.join("\n")).toContain(
      "environment prod's defaults also set spec.source_config",
    );
  });
});
