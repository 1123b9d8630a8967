import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { containerDoc, gitrepoDoc, writeManifests } from "../reconcile/harness.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

describe("plumb apply", () => {
  it("plans, applies with --yes, prints log lines and a summary, exits 0, and writes status", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [
      gitrepoDoc("cli-a", { secrets: [{ name: "K", value: "hidden-value-1" }] }),
    ]);
    const io = captureIo(cp);
    expect(await runApply(started.root, applyFlags(), io)).toBe(0);
    const out = io.out();
    expect(out).toContain("+ create");
    expect(out).toMatch(/apply: Deployment cli-a converged revision \S+ DEPLOYED/);
    expect(out).toContain("Apply complete: 1 converged");
    expect(out + io.err()).not.toContain("hidden-value-1");
    const store = await loadStatusStore(`${started.root}/.plumb/status`);
    expect(store.objects.get("Deployment/cli-a")).toMatchObject({ sync: "Synced", health: "Healthy" });
  });

  it("refuses without a TTY and without --yes, sending nothing", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("cli-b", "registry.example/b:1")]);
    const io = captureIo(cp);
    await expect(runApply(started.root, applyFlags({ yes: false }), io)).rejects.toThrow(/--yes/);
    const list = await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": "plumb-local-key" } });
    expect(((await list.json()) as { resources: unknown[] }).resources).toHaveLength(0);
  });

  it("asks on a terminal and sends nothing unless the answer is yes", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("cli-c", "registry.example/c:1")]);
    const questions: string[] = [];
    const io = captureIo(cp, { stdin: { isTTY: true }, confirm: async (q) => (questions.push(q), false) });
    expect(await runApply(started.root, applyFlags({ yes: false }), io)).toBe(1);
    expect(questions[0]).toContain("Apply 1 change? Only");
    expect(io.out()).toContain("Apply cancelled");
  });

  it("prints JSON results and exits 1 when a build fails", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [
      containerDoc("good", "registry.example/good:1"),
      containerDoc("bad", "registry.example/fail-deploy:1"),
    ]);
    const io = captureIo(cp);
    expect(await runApply(started.root, applyFlags({ output: "json" }), io)).toBe(1);
    const parsed = JSON.parse(io.out());
    expect(parsed.ok).toBe(false);
    expect(parsed.summary).toMatchObject({ converged: 1, failed: 1 });
    const bad = parsed.results.find((r: { name: string }) => r.name === "bad");
    expect(bad).toMatchObject({ outcome: "failed", revision_status: "DEPLOY_FAILED" });
    expect(bad.message).toContain("fail-deploy");
    expect(parsed.plan.format_version).toBe("1");
  });

  it("prints a Markdown comment (and nothing else on stdout) naming the failure and its reason", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [
      gitrepoDoc("md-good", { secrets: [{ name: "K", value: "hidden-value-md" }] }),
      containerDoc("md-bad", "registry.example/fail-deploy:1"),
    ]);
    const io = captureIo(cp);
    expect(await runApply(started.root, applyFlags({ output: "markdown" }), io)).toBe(1);
    const md = io.out();
    expect(md.split("\n").slice(0, 2)).toEqual([
      "<!-- plumb apply -->",
      "### plumb apply: ❌ did not converge",
    ]);
    expect(md).toContain(`control plane \`${cp.url}\``);
    expect(md).toMatch(
      /\| ✅ converged \| Deployment \| `md-good` \| `[^`]+\.yaml:\d+` \| `[^`]+` DEPLOYED \|/,
    );
    expect(md).toMatch(/❌ failed: Deployment <code>md-bad<\/code>/);
    expect(md).toMatch(/! failed: .*fail-deploy/);
    expect(md + io.err()).not.toContain("hidden-value-md");
    // The plan and progress went to stderr.
    expect(io.err()).toContain("+ create");
    expect(md).not.toContain("apply: Deployment");
  });

  it("--no-wait returns once accepted and records Progressing", async () => {
    const started = await startPlane({ revisionSeconds: 5 });
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("later", "registry.example/l:1")]);
    const io = captureIo(cp);
    expect(await runApply(started.root, applyFlags({ wait: false }), io)).toBe(0);
    const store = await loadStatusStore(`${started.root}/.plumb/status`);
    expect(store.objects.get("Deployment/later")).toMatchObject({
      sync: "Progressing",
      health: "Progressing",
    });
  });
});

describe("plumb apply interrupted", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)(
    "stops on %s, exits %i, records what was sent, and a second run finishes the job",
    async (name, code) => {
      const { EventEmitter } = await import("node:events");
      const started = await startPlane();
      cp = started.cp;
      await writeManifests(
        started.root,
        Array.from({ length: 6 }, (_, i) => containerDoc(`sig-${i}`, `registry.example/sig-${i}:1`)),
      );
      const signals = new EventEmitter();
      let creates = 0;
      const fetchAndInterrupt: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === "POST" && ++creates === 2) signals.emit(name);
        return response;
      };
      const io = captureIo(cp, { fetch: fetchAndInterrupt, signals: signals as never });
      expect(await runApply(started.root, applyFlags({ concurrency: 1 }), io)).toBe(code);
      expect(io.out()).toContain(`${name}: stopping; what was sent is recorded, run apply again to finish`);
      const list = async () =>
        (
          (await (
            await fetch(`${cp!.url}/v2/deployments`, { headers: { "x-api-key": "plumb-local-key" } })
          ).json()) as {
            resources: Array<{ name: string; id: string }>;
          }
        ).resources;
      // Stopped sending: only the two creates before the signal reached the control plane ...
      const sent = await list();
      expect(sent).toHaveLength(2);
      // ... and both are recorded with their ids; nothing is recorded for what was never sent.
      const store = await loadStatusStore(`${started.root}/.plumb/status`);
      expect([...store.objects.values()].map((r) => [r.name, r.id]).sort()).toEqual(
        sent.map((d) => [d.name, d.id]).sort(),
      );
      // The second create was cut short after the server carried it out: looked up and recorded as sent.
      expect(store.objects.get("Deployment/sig-1")).toMatchObject({ sync: "Progressing" });
      expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);

      expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
      expect((await list()).map((d) => d.name).sort()).toEqual(
        Array.from({ length: 6 }, (_, i) => `sig-${i}`),
      );
    },
  );
});
