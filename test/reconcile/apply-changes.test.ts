import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import type { ControlPlaneOptions } from "../../src/control-plane/options.js";
import type { PlannedPrune } from "../../src/diff/plan/plan-types.js";
import { applyChanges, buildApplyOptions } from "../../src/reconcile/apply-changes.js";
import { planManifests, recordsFromStatus } from "../../src/reconcile/plan/plan-run.js";
import { applyObjects } from "../../src/reconcile/session.js";
import { readPruneLedger } from "../../src/status/prune-ledger.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { anyFile, removeObjectStatus, saveObjectStatus } from "../../src/status/write/save-records.js";
import { type Env, FastClock, startEnv, writeManifests } from "./harness.js";

// The replace → apply → prune sequence plumb apply and the controller share (apply-changes.ts),
// against the local control plane: what it did is counted there (which deployments exist, with
// which ids), in the status store and in the prune ledger.

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

/** A self-hosted deployment: its listener namespace is immutable, a change of it needs a replace. */
const agent = (name: string, namespace = "agents") => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    source: "external_container",
    source_config: { listener_id: DEFAULT_LISTENER_ID, listener_config: { k8s_namespace: namespace } },
    source_revision_config: { image_uri: "img/edge:1" },
  },
});

/**
 * edge and gone applied; then git changes edge's namespace (replace allowed), drops gone (pruned)
 * and adds fresh. Returns the sequence's input and the ids before.
 */
async function scenario(cpOptions: Partial<ControlPlaneOptions> = {}) {
  const clock = new FastClock();
  env = await startEnv({ mode: "self-hosted", ...cpOptions }, clock);
  const { root, statusDir, ports } = env;
  await writeManifests(root, [agent("edge"), agent("gone")]);
  const first = await env.apply();
  expect(first.results.map((r) => [r.name, r.outcome, r.message])).toEqual([
    ["edge", "converged", null],
    ["gone", "converged", null],
  ]);
  const before = new Map((await ports.deployments.listDeployments()).map((d) => [d.name, d.id]));
  await writeManifests(root, [agent("edge", "agents-v2"), agent("fresh")]);
  const store = await loadStatusStore(statusDir);
  const result = await planManifests({
    root,
    controlPlane: ports.controlPlane,
    platform: ports.platformClient,
    recorded: recordsFromStatus(store),
    replace: ["edge"],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const deletes: PlannedPrune[] = [
    { kind: "Deployment", name: "gone", id: before.get("gone")!, action: "delete" },
  ];
  const forgotten: string[] = [];
  const records = {
    previous: store.objects,
    record: (status: Parameters<typeof saveObjectStatus>[1]) =>
      saveObjectStatus(statusDir, status, anyFile).then(() => {}),
    forget: async (kind: string, name: string) => {
      forgotten.push(name);
      await removeObjectStatus(statusDir, kind, name, anyFile);
    },
  };
  const settings = {
    clock,
    wait: true,
    timeoutMs: 60_000,
    concurrency: 4,
    gitCommit: "c1",
    pollIntervalMs: 10,
  };
  const run = { plan: result.plan, objects: applyObjects(result), live: result.live.deployments };
  const lines: string[] = [];
  const out = { write: (text: string) => lines.push(text) };
  const go = () => applyChanges(ports, { ...run, prune: { deletes, statusDir } }, settings, records, out);
  return { before, go, forgotten, lines, plan: result.plan };
}

describe("applyChanges: replace, apply, prune", () => {
  it("deletes the replaced deployment before creating it again, applies the rest, then prunes (counted)", async () => {
    const { before, go, forgotten, lines, plan } = await scenario();
    expect(plan.changes.map((c) => [c.name, c.action, c.replaces?.id ?? null])).toEqual([
      ["edge", "create", before.get("edge")],
      ["fresh", "create", null],
    ]);
    const done = await go();

    expect(lines).toEqual([`- replace: Deployment edge (${before.get("edge")}): deleted\n`]);
    expect(done.notRemoved.size).toBe(0);
    expect(done.report.results.map((r) => [r.name, r.outcome])).toEqual([
      ["edge", "converged"],
      ["fresh", "converged"],
    ]);
    expect(done.pruned.map((p) => [p.name, p.outcome])).toEqual([["gone", "deleted"]]);
    // On the control plane: edge again under a new id with git's namespace, gone deleted, fresh created.
    const { ports, statusDir } = env!;
    const live = await ports.deployments.listDeployments();
    expect(live.map((d) => d.name).sort()).toEqual(["edge", "fresh"]);
    const newEdge = live.find((d) => d.name === "edge")!;
    expect(newEdge.id).not.toBe(before.get("edge"));
    expect(newEdge.source_config.listener_config?.k8s_namespace).toBe("agents-v2");
    expect(await ports.deployments.getDeployment(before.get("gone")!)).toBeNull();
    // Records: the replaced and the pruned forgotten once each, edge recorded with its new id.
    expect(forgotten).toEqual(["edge", "gone"]);
    const store = await loadStatusStore(statusDir);
    expect([...store.objects.keys()].sort()).toEqual(["Deployment/edge", "Deployment/fresh"]);
    expect(store.objects.get("Deployment/edge")?.id).toBe(newEdge.id);
    // Only the prune counts against --prune-max, not the replacement's deletion.
    expect((await readPruneLedger(statusDir)).map((e) => [e.name, e.id])).toEqual([
      ["gone", before.get("gone")],
    ]);
  });

  it("a replacement whose old deployment cannot be deleted is not created; the rest still applies", async () => {
    const faults = { rates: [{ kind: "500" as const, share: 1 }], methods: ["DELETE"] };
    const { before, go, forgotten } = await scenario({ faults });
    const done = await go();

    expect([...done.notRemoved]).toEqual(["edge"]);
    expect(done.report.results.map((r) => [r.name, r.outcome])).toEqual([["fresh", "converged"]]);
    expect(done.pruned.map((p) => [p.name, p.outcome])).toEqual([["gone", "failed"]]);
    const live = await env!.ports.deployments.listDeployments();
    expect(live.map((d) => [d.name, d.id]).sort()).toEqual(
      [
        ["edge", before.get("edge")],
        ["fresh", live.find((d) => d.name === "fresh")!.id],
        ["gone", before.get("gone")],
      ].sort(),
    );
    expect(forgotten).toEqual([]);
    // The prune's deletion was counted before it was sent (e5c3403: a kill between the server's
    // deletion and its answer left it out of --prune-max), so a DELETE the server refused still
    // counts: the budget errs towards deleting less. The replacement's deletion is never counted.
    expect((await readPruneLedger(env!.statusDir)).map((e) => [e.name, e.id])).toEqual([
      ["gone", before.get("gone")],
    ]);
  });
});

describe("buildApplyOptions", () => {
  it("keys live by name and leaves unset polling to the engine's defaults", () => {
    const clock = new FastClock();
    const deployment = { name: "a", id: "1" } as Parameters<typeof buildApplyOptions>[1][number];
    const saved: unknown[] = [];
    const records = { previous: new Map(), record: async (s: unknown) => void saved.push(s) };
    const base = { clock, wait: false, timeoutMs: 5, concurrency: 2, gitCommit: null };
    const options = buildApplyOptions(base, [deployment], records);
    expect(options).toMatchObject({ wait: false, timeoutMs: 5, concurrency: 2, gitCommit: null });
    expect([...options.live!.entries()]).toEqual([["a", deployment]]);
    expect("pollIntervalMs" in options || "maxPollIntervalMs" in options || "onProgress" in options).toBe(
      false,
    );
    const set = buildApplyOptions({ ...base, pollIntervalMs: 7, maxPollIntervalMs: 70 }, [], records);
    expect([set.pollIntervalMs, set.maxPollIntervalMs]).toEqual([7, 70]);
  });
});
