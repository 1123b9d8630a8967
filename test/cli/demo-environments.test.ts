import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/cli/demo/demo.js";
import type { DemoPlanes } from "../../src/cli/demo/demo-planes.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";

// `plumb demo --once` on the examples' three environments: staging and prod land on the hosted
// control plane (staging's names suffixed), onprem on the self-hosted one, each deployment with
// the version its environment's override pins; promote --to prod then copies staging's checked
// versions into prod's overrides, and prod runs them. Counted on the two control planes.

type Live = { name: string; source_revision_config: { repo_ref?: string; image_uri?: string } };

async function live(url: string): Promise<Map<string, Live["source_revision_config"]>> {
  const res = await fetch(`${url}/v2/deployments?limit=100`, { headers: { "x-api-key": DEFAULT_API_KEY } });
  const body = (await res.json()) as { resources: Live[] };
  return new Map(body.resources.map((d) => [d.name, d.source_revision_config]));
}

describe("plumb demo --once", () => {
  it("applies staging and onprem, promotes staging's versions to prod, applies prod", async () => {
    let out = "";
    let hosted = new Map<string, Live["source_revision_config"]>();
    let selfHosted = new Map<string, Live["source_revision_config"]>();
    const code = await runDemo(
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (out += t) },
        // A PLUMB_API_URL of the user's is not where the demo's environments go.
        env: { PATH: process.env.PATH, PLUMB_API_URL: "http://127.0.0.1:9" },
        onApplied: async ({ planes }: { planes: DemoPlanes }) => {
          hosted = await live(planes.hosted.url);
          selfHosted = await live(planes.selfHosted.url);
        },
      },
      { once: true, revisionSeconds: 0.02 },
    );
    expect(code, out).toBe(0);
    expect([...hosted.keys()].sort()).toEqual([
      "docs-agent",
      "docs-agent-staging",
      "research-agent",
      "support-agent",
      "support-agent-staging",
      "triage-agent",
      "triage-agent-staging",
    ]);
    expect(hosted.get("support-agent-staging")?.repo_ref).toBe("refs/tags/v1.5.0");
    // Promoted: prod now runs what staging ran and checked.
    expect(hosted.get("support-agent")?.repo_ref).toBe("refs/tags/v1.5.0");
    expect(hosted.get("triage-agent-staging")?.image_uri).toMatch(/:2\.4\.0$/);
    expect(hosted.get("triage-agent")?.image_uri).toMatch(/:2\.4\.0$/);
    expect([...selfHosted.keys()].sort()).toEqual(["billing-agent", "ops-agent"]);
    for (const name of ["staging", "onprem", "prod"]) expect(out).toContain(`== environment ${name} ==`);
    expect(out).toContain("verify passed");
    // promote --to prod: first refused by prod's soak gate, then (soak 0s in the copy) promoted.
    expect(out).toMatch(/✗ soak fails: deployed (\d+s|\d+m( \d+s)?) ago .*; 30m needed/);
    expect(out).toMatch(/support-agent: promoted\n/);
    expect(out).toContain("+      source_revision_config: { repo_ref: refs/tags/v1.5.0 }");
    expect(out).not.toContain("sk-demo-not-a-real-key");
    expect(out).toContain("Stopped cleanly.");
  }, 90_000);

  it("stops where an environment does not converge, as apply does: the ones after it get nothing", async () => {
    let out = "";
    let err = "";
    let hosted = new Map<string, Live["source_revision_config"]>();
    let selfHosted = new Map<string, Live["source_revision_config"]>();
    const code = await runDemo(
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
        env: { PATH: process.env.PATH },
        // support-agent's first check makes the local agent fail its run: staging's verify fails.
        onCopied: async (dir) => {
          const file = join(dir, "saas", "support-agent.yaml");
          const text = await readFile(file, "utf8");
          await writeFile(file, text.replace('input: "Where is my order #1042?"', 'input: "raise error"'));
        },
        onApplied: () => {
          throw new Error("not every environment converged: the demo must not reach this");
        },
        onStopping: async (planes: DemoPlanes) => {
          hosted = await live(planes.hosted.url);
          selfHosted = await live(planes.selfHosted.url);
        },
      },
      { once: true, revisionSeconds: 0.02 },
    );
    expect(code, out + err).toBe(1);
    expect(err).toContain(
      "plumb: environment staging did not converge (exit 1), so prod was not applied (nothing sent there)",
    );
    // Counted on the control planes: onprem went first (promotion order: no chain, then by name),
    // staging's deployments are there, none of prod's.
    expect([...selfHosted.keys()].sort()).toEqual(["billing-agent", "ops-agent"]);
    expect([...hosted.keys()].every((name) => name.endsWith("-staging"))).toBe(true);
    expect(hosted.size).toBeGreaterThan(0);
    expect(out).not.toContain("== environment prod ==");
    expect(out).not.toContain("promote --to prod");
    expect(out).toContain("Stopped cleanly.");
  }, 90_000);
});
