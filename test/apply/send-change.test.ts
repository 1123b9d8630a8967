import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sendChange } from "../../src/apply/send-change.js";
import { context, newRef, revisions, setup, stopControlPlane, update } from "./send-change-harness.js";

// sendChange against the local control plane's real answers (send-change-harness.ts); the paths
// that are not about lost responses are in send-change-paths.test.ts.

describe("sendChange", () => {
  it("sends a revision-creating PATCH once and returns the revision it created", async () => {
    const s = await setup(undefined);
    const change = update(s.deployment.id, newRef, true);
    const sent = await sendChange(s.ports, change, s.deployment, context(s.clock));
    const all = await revisions(s);
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.revisionId).not.toBe(s.deployment.latest_revision_id);
    expect(sent.recovered).toBe(false);
    expect(s.patches()).toBe(1);
  });

  it("an in-place PATCH names no revision to wait for", async () => {
    const s = await setup(undefined);
    const change = update(s.deployment.id, { source_config: { build_command: "make" } }, false);
    const sent = await sendChange(s.ports, change, s.deployment, context(s.clock));
    expect(sent.revisionId).toBeNull();
    expect(sent.deployment?.source_config.build_command).toBe("make");
    expect(await revisions(s)).toHaveLength(1);
  });

  it("a lost response that landed: not resent, and the new revision is returned to wait for", async () => {
    const s = await setup({ rates: [{ kind: "lost-response", share: 1 }], max: 1 });
    const change = update(s.deployment.id, newRef, true);
    const sent = await sendChange(s.ports, change, s.deployment, context(s.clock));
    const all = await revisions(s);
    expect(all).toHaveLength(2);
    expect(s.patches()).toBe(1);
    // Without the id apply would call it converged without waiting for a revision that may fail.
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.deployment?.latest_revision_id).toBe(all[0]?.id);
    expect(sent.recovered).toBe(true);
  });

  it("a 5xx that did not land is resent once, from the baseline it reads itself", async () => {
    const s = await setup({ rates: [{ kind: "500", share: 1 }], max: 1 });
    const change = update(s.deployment.id, newRef, true);
    // No deployment given: sendChange reads the baseline before sending.
    const sent = await sendChange(s.ports, change, null, context(s.clock));
    const all = await revisions(s);
    expect(s.patches()).toBe(2);
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.revisionId).not.toBe(s.deployment.latest_revision_id);
  });

  it("waits as long as a 503's Retry-After says before sending again", async () => {
    const s = await setup({ rates: [{ kind: "503", share: 1 }], max: 1 });
    const started = s.clock.now();
    const sent = await sendChange(s.ports, update(s.deployment.id, newRef, true), s.deployment, {
      clock: s.clock,
      random: () => 0,
    });
    expect(s.clock.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(s.patches()).toBe(2);
    expect(sent.revisionId).toBe((await revisions(s))[0]?.id);
  });

  it("a revision someone else made since the plan is not taken for the PATCH's: resent after a 5xx", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-send-change-"));
    const planned = await setup(undefined, 50, { data: { dataDir } });
    // After the plan read the deployment, a push (or the UI) made a revision of its own.
    const hotfix = { source_revision_config: { repo_ref: "hotfix" } };
    await planned.ports.controlPlane.patchDeployment(planned.deployment.id, hotfix);
    await stopControlPlane();
    const s = await setup({ rates: [{ kind: "500", share: 1 }], max: 1 }, 50, {
      data: { dataDir, deployment: planned.deployment },
    });
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, newRef, true),
      s.deployment,
      context(s.clock),
    );
    const all = await revisions(s);
    expect(s.patches()).toBe(2);
    expect(all).toHaveLength(3);
    expect(sent.revisionId).toBe(all[0]?.id);
    const live = await s.ports.controlPlane.getDeployment(s.deployment.id);
    expect(live?.source_revision_config.repo_ref).toBe("release");
  });

  it("a lost in-place PATCH is resent (absolute values): one change, no revision", async () => {
    const s = await setup({ rates: [{ kind: "lost-response", share: 1 }], max: 1 });
    const change = update(s.deployment.id, { source_config: { build_command: "make again" } }, false);
    const sent = await sendChange(s.ports, change, s.deployment, context(s.clock));
    expect(s.patches()).toBe(2);
    expect(sent.revisionId).toBeNull();
    expect(sent.recovered).toBe(true);
    expect(sent.deployment?.source_config.build_command).toBe("make again");
    expect(await revisions(s)).toHaveLength(1);
  });

  it("a persistent 5xx gives up after a bounded number of attempts, with the server's error", async () => {
    const s = await setup({ rates: [{ kind: "500", share: 1 }] }, 20);
    const change = update(s.deployment.id, newRef, true);
    const started = s.clock.now();
    await expect(sendChange(s.ports, change, s.deployment, context(s.clock))).rejects.toMatchObject({
      status: 500,
    });
    expect(s.patches()).toBe(8);
    expect(await revisions(s)).toHaveLength(1);
    // It waited between attempts (full jitter at 0.5 of each ceiling), never longer than 5 s once.
    const waited = s.clock.now() - started;
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(7 * 5_000);
  });

  it("a deployment deleted meanwhile stops with deployment-vanished", async () => {
    const s = await setup({ rates: [{ kind: "500", share: 1 }], max: 1 });
    const change = update(s.deployment.id, newRef, true);
    await s.ports.controlPlane.deleteDeployment(s.deployment.id);
    await expect(sendChange(s.ports, change, s.deployment, context(s.clock))).rejects.toMatchObject({
      code: "deployment-vanished",
      message: `deployment svc (${s.deployment.id}) no longer exists`,
    });
    expect(s.patches()).toBe(1);
  });

  it("a refused PATCH (4xx) is not retried", async () => {
    const s = await setup(undefined);
    const change = update(s.deployment.id, { source_revision_config: { repo_ref: 7 } }, true);
    await expect(sendChange(s.ports, change, s.deployment, context(s.clock))).rejects.toMatchObject({
      status: 422,
    });
    expect(s.patches()).toBe(1);
    expect(await revisions(s)).toHaveLength(1);
  });

  it("stops at once when its signal is aborted", async () => {
    const s = await setup({ rates: [{ kind: "500", share: 1 }] });
    const change = update(s.deployment.id, newRef, true);
    const abort = new AbortController();
    const ctx = { ...context(s.clock), signal: abort.signal };
    const clock = s.clock;
    // Aborted while it waits after the first failure.
    ctx.clock = {
      now: clock.now,
      sleep: async (ms, signal) => {
        abort.abort(new Error("stopped"));
        return clock.sleep(ms, signal);
      },
    };
    await expect(sendChange(s.ports, change, s.deployment, ctx)).rejects.toThrow();
    expect(s.patches()).toBe(1);
  });

  it("a change without a request sends nothing", async () => {
    const s = await setup(undefined);
    const change = { ...update(s.deployment.id, {}, false), action: "noop" as const, request: null };
    const sent = await sendChange(s.ports, change, s.deployment, context(s.clock));
    expect(sent).toEqual({ deployment: s.deployment, revisionId: null, recovered: false });
    expect(s.patches()).toBe(0);
  });
});
