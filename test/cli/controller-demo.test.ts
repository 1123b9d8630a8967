import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Controller } from "../../src/controller/controller.js";
import { runDemo } from "../../src/cli/demo.js";
import { waitFor } from "../controller/support.js";

describe("plumb demo", () => {
  it("applies the examples, then reconciles an edited file, and stops cleanly", async () => {
    let out = "";
    let watching: { dir: string; controller: Controller } | undefined;
    let stop!: (signal: NodeJS.Signals) => void;
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => (stop = resolve));
    const done = runDemo(
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (out += t) },
        env: { PATH: process.env.PATH },
        stopSignal,
        onWatching: (info) => (watching = info),
      },
      { once: false, revisionSeconds: 0.02 },
    );
    const { dir, controller } = await waitFor("controller watching", () => watching, 30_000);
    expect(out).toContain("DEPLOYED");
    expect(out).toContain("verify passed");
    expect(out).toContain(join(dir, "triage-agent.yaml"));
    // The copy's schema comments point at plumb's schemas, which exist (not at ../../schemas).
    const comment = /\$schema=(\S+)/.exec(await readFile(join(dir, "triage-agent.yaml"), "utf8"))?.[1];
    expect(comment).toMatch(/^\/.*schemas\/plumb\.schema\.json$/);
    expect(existsSync(comment!)).toBe(true);
    await waitFor("controller ready", () => controller.ready(), 30_000);
    // docs-agent (internal_source) is deployed too: its source directory was packed and uploaded
    expect(controller.status().objects.find((o) => o.name === "docs-agent")).toMatchObject({
      sync: "Synced",
      revision_status: "DEPLOYED",
      source_upload: { digest: expect.stringMatching(/^sha256:/) as unknown },
    });
    expect(out).not.toContain("skipping");
    // Every label stands apart from its value; an object found in sync is not called a "change".
    expect(out).toMatch(/ {2}Status page +http:\/\/127\.0\.0\.1:\d+\/ /);
    expect(out).not.toMatch(/\w(https?:\/\/|\/tmp)/);
    expect(out).not.toContain("(change)");

    const file = join(dir, "triage-agent.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("triage-agent:2.3.1", "triage-agent:2.3.2"));
    await waitFor(
      "edited deployment reconciled",
      () => /Deployment\/triage-agent: update applied/.test(out),
      30_000,
    );
    expect(controller.status().objects.find((o) => o.name === "triage-agent")).toMatchObject({
      sync: "Synced",
    });
    expect(out).not.toContain("sk-demo-not-a-real-key");
    stop("SIGINT"); // Ctrl-C: exit code 130, as the README says
    expect(await done).toBe(130);
    expect(out).toContain("Stopped cleanly.");
  }, 60_000);
});
