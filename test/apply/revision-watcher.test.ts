import { afterEach, describe, expect, it } from "vitest";
import { type ClientPorts, createApplyPorts } from "../../src/apply/api/api-adapter.js";
import { createRevisionWatcher, type WatcherOptions } from "../../src/apply/revision-watcher.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { RevisionStatus } from "../../src/schema/revision.js";
import { FastClock } from "../reconcile/harness.js";
import { gitDeployment } from "./send-change-harness.js";

// The revision watcher against the local control plane, sharing its clock: each revision state
// lasts one second of it, a repo_ref containing fail-build fails the build, a newer revision skips
// an older one still building. Requests are counted on the wire by path.

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

/** `failedReads`: that many GETs answered 500 first (the client does not retry them here). */
async function setup(failedReads = 0) {
  const clock = new FastClock();
  const faults =
    failedReads > 0
      ? { rates: [{ kind: "500" as const, share: 1 }], max: failedReads, methods: ["GET"] }
      : undefined;
  cp = await startControlPlane({
    revisionSeconds: 1,
    deploymentReadySeconds: 0,
    runSeconds: 0,
    clock,
    faults,
  });
  const calls = { list: 0, revision: 0, deployment: 0 };
  // Rounds are told apart by the watcher's sleeps; `beforeGet` runs as a GET leaves.
  let sleeps = 0;
  const sleep = clock.sleep;
  clock.sleep = (ms, signal) => ((sleeps += 1), sleep(ms, signal));
  const reads: Array<{ at: number; round: number }> = [];
  const hooks: { beforeGet?: (kind: keyof typeof calls) => void } = {};
  const counting: typeof fetch = (input, init) => {
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    if (init?.method === "GET" || init?.method === undefined) {
      const kind =
        path === "/v2/deployments" ? "list" : path.includes("/revisions/") ? "revision" : "deployment";
      calls[kind] += 1;
      if (kind === "revision") reads.push({ at: clock.now(), round: sleeps });
      hooks.beforeGet?.(kind);
    }
    return fetch(input, init);
  };
  const ports: ClientPorts = createApplyPorts({
    clock,
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    transport: {
      fetch: counting,
      retry: { baseDelayMs: 5, maxDelayMs: 50, maxAttempts: failedReads > 0 ? 1 : 6 },
      timeoutMs: 5_000,
    },
  });
  const statuses: Array<[string, RevisionStatus]> = [];
  const watcher = (over: Partial<WatcherOptions> = {}) =>
    createRevisionWatcher(ports.deployments, {
      clock,
      random: () => 0.5,
      deadline: clock.now() + 600_000,
      pollIntervalMs: 500,
      maxPollIntervalMs: 2_000,
      onStatus: (id, status) => statuses.push([id, status]),
      ...over,
    });
  const create = (name: string, repoRef = "main") =>
    ports.controlPlane.createDeployment({
      ...gitDeployment(name),
      source_revision_config: { repo_ref: repoRef, graph_config_path: "langgraph.json" },
    });
  return { clock, ports, calls, reads, hooks, statuses, watcher, create };
}

describe("revision watcher against the control plane", () => {
  it("follows one revision to DEPLOYED, telling each status it read", async () => {
    const s = await setup();
    const d = await s.create("one");
    const wait = await s.watcher().wait(d.id, d.latest_revision_id!);
    expect(wait).toEqual({
      status: "DEPLOYED",
      revisionId: d.latest_revision_id,
      supersededBy: null,
      statusMessage: null,
    });
    const seen = s.statuses.filter(([id]) => id === d.id).map(([, status]) => status);
    expect(seen.at(-1)).toBe("DEPLOYED");
    expect(seen.length).toBeGreaterThan(1);
    expect(s.calls.list).toBe(0);
  });

  it("a failed build ends the wait with its status and message", async () => {
    const s = await setup();
    const d = await s.create("broken", "fail-build");
    const wait = await s.watcher().wait(d.id, d.latest_revision_id!);
    expect(wait).toMatchObject({ status: "BUILD_FAILED", statusMessage: "Forced failure: fail-build" });
  });

  it("a revision skipped by a newer one is followed to the end of the newer one", async () => {
    const s = await setup();
    const d = await s.create("moved");
    const newer = await s.ports.controlPlane.patchDeployment(d.id, {
      source_revision_config: { repo_ref: "release" },
    });
    expect(newer.latest_revision_id).not.toBe(d.latest_revision_id);
    const wait = await s.watcher().wait(d.id, d.latest_revision_id!);
    expect(wait).toEqual({
      status: "DEPLOYED",
      revisionId: newer.latest_revision_id,
      supersededBy: newer.latest_revision_id,
      statusMessage: null,
    });
  });

  it("a newer revision that fails: the follow ends with its failure", async () => {
    const s = await setup();
    const d = await s.create("moved");
    const newer = await s.ports.controlPlane.patchDeployment(d.id, {
      source_revision_config: { repo_ref: "fail-build" },
    });
    const wait = await s.watcher().wait(d.id, d.latest_revision_id!);
    expect(wait).toMatchObject({
      status: "BUILD_FAILED",
      revisionId: newer.latest_revision_id,
      supersededBy: newer.latest_revision_id,
    });
  });

  it("many waits are answered by listings; a deployment deleted meanwhile ends VANISHED", async () => {
    const s = await setup();
    const ds = await Promise.all(["a", "b", "c", "d"].map((n) => s.create(n)));
    const gone = ds[3]!;
    await s.ports.controlPlane.deleteDeployment(gone.id);
    const watcher = s.watcher({ listThreshold: 2 });
    const waits = await Promise.all(ds.map((d) => watcher.wait(d.id, d.latest_revision_id!)));
    expect(waits.slice(0, 3).map((w) => w.status)).toEqual(["DEPLOYED", "DEPLOYED", "DEPLOYED"]);
    expect(waits[3]).toMatchObject({ status: "VANISHED", statusMessage: "deployment was deleted" });
    for (const d of ds.slice(0, 3)) expect(s.statuses).toContainEqual([d.id, "DEPLOYED"]);
    expect(s.calls.list).toBeGreaterThan(0);
    // The listing says DEPLOYED: far fewer revision reads than one per wait per round.
    expect(s.calls.revision).toBeLessThan(s.calls.list * 3);
  });

  it("a few waits read their revisions and never list", async () => {
    const s = await setup();
    const ds = await Promise.all(["a", "b"].map((n) => s.create(n)));
    const watcher = s.watcher({ listThreshold: 2 });
    const waits = await Promise.all(ds.map((d) => watcher.wait(d.id, d.latest_revision_id!)));
    expect(waits.map((w) => w.status)).toEqual(["DEPLOYED", "DEPLOYED"]);
    expect(s.calls.list).toBe(0);
  });

  it("ends open waits ABORTED when the signal aborts, and TIMEOUT at the deadline", async () => {
    const s = await setup();
    const d = await s.create("slow");
    const aborted = s.watcher({ signal: AbortSignal.abort(new Error("stopped")) });
    expect(await aborted.wait(d.id, d.latest_revision_id!)).toMatchObject({ status: "ABORTED" });
    const abort = new AbortController();
    const midway = s.watcher({ signal: abort.signal, onStatus: () => abort.abort(new Error("stopped")) });
    expect(await midway.wait(d.id, d.latest_revision_id!)).toMatchObject({ status: "ABORTED" });
    const late = s.watcher({ deadline: s.clock.now() + 1_000 });
    const e = await s.create("slower");
    expect(await late.wait(e.id, e.latest_revision_id!)).toMatchObject({
      status: "TIMEOUT",
      revisionId: e.latest_revision_id,
    });
  });

  it("waits registered after the loop ended start a new one", async () => {
    const s = await setup();
    const watcher = s.watcher();
    const first = await s.create("first");
    expect((await watcher.wait(first.id, first.latest_revision_id!)).status).toBe("DEPLOYED");
    const second = await s.create("second");
    expect((await watcher.wait(second.id, second.latest_revision_id!)).status).toBe("DEPLOYED");
  });

  it("backs off its reads: a revision that takes a minute is read far fewer than once per poll interval", async () => {
    const s = await setup();
    await cp?.stop();
    cp = await startControlPlane({
      revisionSeconds: 10,
      deploymentReadySeconds: 0,
      runSeconds: 0,
      clock: s.clock,
    });
    const ports = createApplyPorts({
      clock: s.clock,
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    });
    const d = await ports.controlPlane.createDeployment(gitDeployment("slow"));
    let reads = 0;
    const started = s.clock.now();
    const watcher = createRevisionWatcher(ports.deployments, {
      clock: s.clock,
      random: () => 0.5,
      deadline: started + 600_000,
      pollIntervalMs: 500,
      maxPollIntervalMs: 8_000,
      onStatus: () => (reads += 1),
    });
    expect((await watcher.wait(d.id, d.latest_revision_id!)).status).toBe("DEPLOYED");
    const took = s.clock.now() - started;
    expect(took).toBeGreaterThanOrEqual(50_000);
    // At 500 ms a read it would be over 100; pauses of 375 ms doubling up to 6 s (half of 8 s
    // fixed, half jittered at 0.5): 14 reads.
    expect(reads).toBeGreaterThanOrEqual(13);
    expect(reads).toBeLessThanOrEqual(16);
    // DEPLOYED 60 s in (six states of 10 s): seen within the longest read pause after that.
    expect(took).toBeLessThanOrEqual(66_000);
  });

  it("follows at most five newer revisions, then ends SKIPPED with the server's message", async () => {
    const s = await setup();
    const d = await s.create("busy");
    // Someone makes a newer revision before each read of ours: each read finds it SKIPPED.
    let pushes = 0;
    const port = {
      ...s.ports.deployments,
      getRevision: async (id: string, revisionId: string) => {
        if (pushes < 10) {
          pushes += 1;
          await s.ports.controlPlane.patchDeployment(id, {
            source_revision_config: { repo_ref: `v${pushes}` },
          });
        }
        return s.ports.deployments.getRevision(id, revisionId);
      },
    };
    const watcher = createRevisionWatcher(port, {
      clock: s.clock,
      random: () => 0.5,
      deadline: s.clock.now() + 600_000,
      pollIntervalMs: 500,
      maxPollIntervalMs: 2_000,
    });
    const wait = await watcher.wait(d.id, d.latest_revision_id!);
    const all = (await s.ports.controlPlane.listRevisions(d.id, { limit: 100 })).resources;
    expect(pushes).toBe(6);
    // Revisions newest first: the sixth read found the fifth one followed skipped by the sixth push.
    expect(wait.status).toBe("SKIPPED");
    expect(wait.revisionId).toBe(all[1]?.id);
    expect(wait.supersededBy).toBe(all[1]?.id);
    expect(wait.statusMessage).toContain(`Superseded by revision ${all[0]?.id}`);
  });

  it("a round that fails is tried again after a pause", async () => {
    const s = await setup(2);
    const d = await s.create("flaky");
    const wait = await s.watcher().wait(d.id, d.latest_revision_id!);
    expect(wait.status).toBe("DEPLOYED");
  });

  it("reads a new revision first after its initial pause, not at once", async () => {
    const s = await setup();
    const d = await s.create("one");
    const started = s.clock.now();
    await s.watcher().wait(d.id, d.latest_revision_id!);
    // 500 ms interval: half of 250 fixed plus half of it jittered at 0.5.
    expect(s.reads[0]!.at - started).toBe(375);
  });

  it("a read or a listing cut short by the signal ends the wait ABORTED, nothing taken from it", async () => {
    for (const kind of ["revision", "list", "deployment"] as const) {
      const s = await setup();
      const ds = await Promise.all(["a", "b", "c"].map((n) => s.create(n)));
      if (kind === "deployment") await s.ports.controlPlane.deleteDeployment(ds[2]!.id);
      s.clock.t += 60_000; // every revision DEPLOYED by now
      const abort = new AbortController();
      s.hooks.beforeGet = (k) => {
        if (k === kind) abort.abort(new Error("stopped"));
      };
      const watcher = s.watcher({ signal: abort.signal, listThreshold: kind === "revision" ? 10 : 2 });
      const waits = await Promise.all(ds.map((d) => watcher.wait(d.id, d.latest_revision_id!)));
      // The deployment read is the deleted one's only: the listing answered the others.
      const expected =
        kind === "deployment" ? ["DEPLOYED", "DEPLOYED", "ABORTED"] : ["ABORTED", "ABORTED", "ABORTED"];
      expect(waits.map((w) => w.status)).toEqual(expected);
    }
  });

  it("a skipped revision whose deployment read is cut short is not taken as followed", async () => {
    const s = await setup();
    const d = await s.create("moved");
    await s.ports.controlPlane.patchDeployment(d.id, { source_revision_config: { repo_ref: "release" } });
    const abort = new AbortController();
    s.hooks.beforeGet = (k) => {
      if (k === "deployment") abort.abort(new Error("stopped"));
    };
    const wait = await s.watcher({ signal: abort.signal }).wait(d.id, d.latest_revision_id!);
    expect(wait).toMatchObject({ status: "ABORTED", supersededBy: null, revisionId: d.latest_revision_id });
  });

  it("an aborted signal sends no request at all", async () => {
    const s = await setup();
    const d = await s.create("one");
    const wait = await s.watcher({ signal: AbortSignal.abort() }).wait(d.id, d.latest_revision_id!);
    expect(wait.status).toBe("ABORTED");
    expect(s.calls).toEqual({ list: 0, revision: 0, deployment: 0 });
  });

  it("reads at most maxReadsPerRound revisions a round", async () => {
    const s = await setup();
    const ds = await Promise.all(["a", "b", "c"].map((n) => s.create(n)));
    s.clock.t += 60_000;
    const watcher = s.watcher({ maxReadsPerRound: 1, listThreshold: 10 });
    const waits = await Promise.all(ds.map((d) => watcher.wait(d.id, d.latest_revision_id!)));
    expect(waits.map((w) => w.status)).toEqual(["DEPLOYED", "DEPLOYED", "DEPLOYED"]);
    const rounds = s.reads.map((r) => r.round);
    expect(rounds).toHaveLength(3);
    expect(new Set(rounds).size).toBe(3);
  });

  it("reads no deployment when the listing or the revision says enough", async () => {
    const s = await setup();
    const ds = await Promise.all(["a", "b", "c"].map((n) => s.create(n)));
    const watcher = s.watcher({ listThreshold: 2 });
    await Promise.all(ds.map((d) => watcher.wait(d.id, d.latest_revision_id!)));
    const few = await s.create("d");
    await s.watcher().wait(few.id, few.latest_revision_id!);
    expect(s.calls.deployment).toBe(0);
  });
});
