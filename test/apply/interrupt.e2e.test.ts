import { afterEach, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/clock.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { type Env, containerDoc, startEnv, writeManifests } from "../reconcile/harness.js";

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

describe("interrupted apply", () => {
  it("stops sending, records what was sent, and a second run finishes with one revision each", async () => {
    // The control plane's time stands still during the interrupted run, so no revision it is sent
    // is DEPLOYED before the interrupt: each object waits for its revision while the next ones are
    // sent, and a loaded run saw the first one deployed before the third PATCH (11 interrupted).
    let frozenAt: number | undefined;
    const clock: Clock = { now: () => frozenAt ?? Date.now(), sleep: systemClock.sleep };
    env = await startEnv({ revisionSeconds: 0.05, clock });
    const names = Array.from({ length: 12 }, (_, i) => `int-${i}`);
    await writeManifests(
      env.root,
      names.map((n) => containerDoc(n, `registry.example/${n}:1`)),
    );
    await env.apply();
    await writeManifests(
      env.root,
      names.map((n) => containerDoc(n, `registry.example/${n}:2`)),
    );

    const controller = new AbortController();
    const port = env.ports.deployments;
    const patch = port.patchDeploymentOnce.bind(port);
    let sent = 0;
    port.patchDeploymentOnce = async (id, body, o) => {
      const result = await patch(id, body, o);
      if (++sent === 3) controller.abort(new Error("SIGINT"));
      return result;
    };
    frozenAt = Date.now();
    const report = await env.apply({ concurrency: 1, signal: controller.signal });
    frozenAt = undefined;
    expect(report.ok).toBe(false);
    expect(sent).toBe(3);
    expect(report.summary.interrupted).toBe(12);
    const store = await loadStatusStore(env.statusDir);
    const progressing = [...store.objects.values()].filter((s) => s.sync === "Progressing");
    expect(progressing).toHaveLength(3);

    port.patchDeploymentOnce = patch;
    const rerun = await env.apply();
    expect(rerun.ok).toBe(true);
    expect(rerun.results.filter((r) => r.action === "noop")).toHaveLength(3);
    for (const d of await env.ports.controlPlane.listDeployments()) {
      expect((await env.ports.controlPlane.listRevisions(d.id, { limit: 100 })).resources).toHaveLength(2);
      expect(d.active_revision_id).toBe(d.latest_revision_id);
    }
  });
});
