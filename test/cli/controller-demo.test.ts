import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Controller } from "../../src/controller/controller.js";
import { runDemo } from "../../src/cli/demo/demo.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { waitFor } from "../controller/support.js";

/** Each deployment's number of revisions on a control plane, by name. */
async function revisionCounts(url: string): Promise<Record<string, number>> {
  const headers = { "x-api-key": DEFAULT_API_KEY };
  const list = (await (await fetch(`${url}/v2/deployments?limit=100`, { headers })).json()) as {
    resources: Array<{ id: string; name: string }>;
  };
  const counts: Record<string, number> = {};
  for (const d of list.resources) {
    const revisions = (await (
      await fetch(`${url}/v2/deployments/${d.id}/revisions`, { headers })
    ).json()) as {
      resources: unknown[];
    };
    counts[d.name] = revisions.resources.length;
  }
  return counts;
}

describe("plumb demo", () => {
  it("applies the examples' environments, then promotes to prod, reconciles an edit of the base spec in prod only, and stops cleanly", async () => {
    let out = "";
    let watching: { dir: string; controller: Controller } | undefined;
    let hosted = "";
    let stop!: (signal: NodeJS.Signals) => void;
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => (stop = resolve));
    const done = runDemo(
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (out += t) },
        env: { PATH: process.env.PATH },
        stopSignal,
        onApplied: ({ planes }) => void (hosted = planes.hosted.url),
        onWatching: (info) => (watching = info),
      },
      { once: false, revisionSeconds: 0.02 },
    );
    // Bounded by the demo itself: it ending first fails at once, with what it printed; the bound in
    // time only stops a hang (a loaded machine takes several times the 12 s of a quiet one).
    const ended = done.then((code) => {
      throw new Error(`the demo ended (${code}) before its controller watched:\n${out}`);
    });
    ended.catch(() => undefined);
    // A hang says where the demo was: its output so far (CI of 13524be timed out here once, on
    // Node 20 under load, with nothing to go on).
    const watched = waitFor("controller watching", () => watching, 120_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; the demo printed:\n${out.slice(-4_000)}`, { cause: error });
    });
    const { dir, controller } = await Promise.race([watched, ended]);
    expect(out).toContain("DEPLOYED");
    expect(out).toContain("verify passed");
    expect(out).toContain(join(dir, "saas", "support-agent.yaml"));
    expect(out).toMatch(/support-agent: promoted/);
    // The matrix in the terminal: support-agent at v1.5.0 in staging and prod, billing-agent in onprem.
    expect(out).toMatch(
      /\n {2}deployment +(staging|prod|onprem) +(staging|prod|onprem) +(staging|prod|onprem)\n/,
    );
    expect(out).toMatch(/\n {2}support-agent +(v1\.5\.0 +v1\.5\.0 +-|- +v1\.5\.0 +v1\.5\.0)\n/);
    expect(out).toMatch(
      /\n {2}billing-agent +.*agents\/billing-agent:3\.8\.0|\n {2}billing-agent +.*billing-agent:3\.8\.0/,
    );
    // The copy's schema comments point at plumb's schemas, which exist (not at ../../schemas).
    const comment = /\$schema=(\S+)/.exec(
      await readFile(join(dir, "saas", "triage-agent.yaml"), "utf8"),
    )?.[1];
    expect(comment).toMatch(/^\/.*schemas\/plumb\.schema\.json$/);
    expect(existsSync(comment!)).toBe(true);
    // Every environment led here and settled (ready() is true once the environments led so far are).
    await waitFor(
      "every environment settled",
      () => {
        const environments = controller.status().environments ?? [];
        return environments.length === 3 && environments.every((e) => e.role === "leader" && e.settled);
      },
      60_000,
    );
    // docs-agent (internal_source) is deployed too: its source directory was packed and uploaded
    expect(
      controller.status().objects.find((o) => o.name === "docs-agent" && o.environment === "prod"),
    ).toMatchObject({
      sync: "Synced",
      revision_status: "DEPLOYED",
      source_upload: { digest: expect.stringMatching(/^sha256:/) as unknown },
    });
    expect(out).not.toContain("skipping");
    // Every label stands apart from its value; an object found in sync is not called a "change".
    expect(out).toMatch(/ {2}Status page +http:\/\/127\.0\.0\.1:\d+\/ /);
    expect(out).not.toMatch(/\w(https?:\/\/|\/tmp)/);
    expect(out).not.toContain("(change)");

    // The base spec's LOG_LEVEL changes prod only: staging's override sets its own.
    const before = await revisionCounts(hosted);
    const file = join(dir, "saas", "support-agent.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("value: info", "value: warning"));
    await waitFor(
      "edited deployment reconciled",
      () => /Deployment\/support-agent: update applied/.test(out),
      60_000,
    );
    expect(
      controller.status().objects.find((o) => o.name === "support-agent" && o.environment === "prod"),
    ).toMatchObject({ sync: "Synced" });
    const after = await revisionCounts(hosted);
    expect(after["support-agent"]).toBe(before["support-agent"]! + 1);
    expect(after["support-agent-staging"]).toBe(before["support-agent-staging"]);
    // The status page's matrix: each agent across the three environments, with its version there.
    const matrix = (await (await fetch(`${watching!.controller.url}/ui/api/matrix`)).json()) as {
      environments: string[];
      rows: Array<{ deployment: string; cells: Array<{ version: string | null } | null> }>;
    };
    expect([...matrix.environments].sort()).toEqual(["onprem", "prod", "staging"]);
    const support = matrix.rows.find((r) => r.deployment === "support-agent");
    const versionIn = (env: string) => support?.cells[matrix.environments.indexOf(env)]?.version;
    // staging's release candidate, promoted to prod by the demo.
    expect([versionIn("staging"), versionIn("prod")]).toEqual(["refs/tags/v1.5.0", "refs/tags/v1.5.0"]);
    expect(out).not.toContain("sk-demo-not-a-real-key");
    stop("SIGINT"); // Ctrl-C: exit code 130, as the README says
    expect(await done).toBe(130);
    expect(out).toContain("Stopped cleanly.");
  }, 300_000);
});
