import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Controller } from "../../src/controller/controller.js";
import { runDemo } from "../../src/cli/demo.js";
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
  it("applies the examples' environments, then reconciles an edited file in prod, and stops cleanly", async () => {
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
    const { dir, controller } = await waitFor("controller watching", () => watching, 30_000);
    expect(out).toContain("DEPLOYED");
    expect(out).toContain("verify passed");
    expect(out).toContain(join(dir, "saas", "triage-agent.yaml"));
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
      30_000,
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

    const file = join(dir, "saas", "triage-agent.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("triage-agent:2.3.1", "triage-agent:2.3.2"));
    await waitFor(
      "edited deployment reconciled",
      () => /Deployment\/triage-agent: update applied/.test(out),
      30_000,
    );
    expect(
      controller.status().objects.find((o) => o.name === "triage-agent" && o.environment === "prod"),
    ).toMatchObject({ sync: "Synced" });
    // Only prod's triage-agent took the edit: staging's override pins its own image.
    expect(await revisionCounts(hosted)).toMatchObject({ "triage-agent": 2, "triage-agent-staging": 1 });
    // The status page's matrix: each agent across the three environments, with its version there.
    const matrix = (await (await fetch(`${watching!.controller.url}/ui/api/matrix`)).json()) as {
      environments: string[];
      rows: Array<{ deployment: string; cells: Array<{ version: string | null } | null> }>;
    };
    expect([...matrix.environments].sort()).toEqual(["onprem", "prod", "staging"]);
    const support = matrix.rows.find((r) => r.deployment === "support-agent");
    const versionIn = (env: string) => support?.cells[matrix.environments.indexOf(env)]?.version;
    expect([versionIn("staging"), versionIn("prod")]).toEqual(["refs/tags/v1.5.0", "refs/tags/v1.4.2"]);
    expect(out).not.toContain("sk-demo-not-a-real-key");
    stop("SIGINT"); // Ctrl-C: exit code 130, as the README says
    expect(await done).toBe(130);
    expect(out).toContain("Stopped cleanly.");
  }, 60_000);
});
