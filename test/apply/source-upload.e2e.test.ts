import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadStatusStore } from "../../src/status/status-store.js";
import { type Env, FastClock, call, startEnv, writeManifests } from "../reconcile/harness.js";
import { internalSource } from "../controller/support.js";

// internal_source against the local control plane: create uploads the source and converges, a
// changed file makes exactly one new revision, an unchanged directory is never uploaded again.

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const sourceDoc = (name: string, sourcePath = "./agent", graph = "langgraph.json") =>
  internalSource(name, sourcePath, graph);

async function writeSource(root: string, version: string, dir = "agent") {
  await mkdir(join(root, dir, "src"), { recursive: true });
  await writeFile(join(root, dir, "package.json"), '{"name": "agent", "type": "module"}\n');
  await writeFile(join(root, dir, "langgraph.json"), '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
  await writeFile(join(root, dir, "src/agent.ts"), `export const version = "${version}";\n`);
}

const revisions = async (e: Env, id: string) =>
  (await e.ports.controlPlane.listRevisions(id, { limit: 100 })).resources;

/** Counts the upload calls the engine makes, passing each on to the real client. */
function countUploads(e: Env) {
  const counts = { urls: 0, puts: 0 };
  const uploads = e.ports.uploads!;
  const createUploadUrl = uploads.createUploadUrl.bind(uploads);
  const uploadTarball = uploads.uploadTarball.bind(uploads);
  uploads.createUploadUrl = (id, o) => ((counts.urls += 1), createUploadUrl(id, o));
  uploads.uploadTarball = (url, bytes, o) => ((counts.puts += 1), uploadTarball(url, bytes, o));
  return counts;
}

describe("internal_source apply", () => {
  it("creates → DEPLOYED with the uploaded source; unchanged → noop without upload; changed file → one revision", async () => {
    env = await startEnv();
    const counts = countUploads(env);
    await writeSource(env.root, "1");
    await writeManifests(env.root, [sourceDoc("docs")]);

    const { plan } = await env.plan();
    expect(plan.changes[0]).toMatchObject({ action: "create", upload: { reason: "not_uploaded" } });
    const created = await env.apply();
    expect(created.results[0]).toMatchObject({ outcome: "converged", revision_status: "DEPLOYED" });
    expect(counts).toEqual({ urls: 1, puts: 1 });
    const status = (await loadStatusStore(env.statusDir)).objects.get("Deployment/docs")!;
    const live = (await call(env.cp, "GET", `/v2/deployments/${status.id}`)).body!;
    expect(status.source_upload?.digest).toBe(plan.changes[0]!.upload!.digest);
    expect(live.source_revision_config.source_tarball_path).toBe(status.source_upload?.object_path);
    expect(live.active_revision_id).toBe(created.results[0]!.revision_id);
    // The create's own revision had no tarball; the upload's revision is the one deployed.
    const first = await revisions(env, status.id!);
    expect(first).toHaveLength(2);
    expect(first[0]).toMatchObject({
      status: "DEPLOYED",
      source_revision_config: { source_tarball_path: status.source_upload?.object_path },
    });

    // Unchanged: nothing uploaded, no revision.
    const again = await env.apply();
    expect(again.results[0]).toMatchObject({ action: "noop", outcome: "converged" });
    expect(counts).toEqual({ urls: 1, puts: 1 });
    expect(await revisions(env, status.id!)).toHaveLength(2);

    // One file changes, and a revision field with it: one upload, one PATCH, one revision.
    await writeSource(env.root, "2");
    await writeManifests(env.root, [sourceDoc("docs", "./agent", "agent/langgraph.json")]);
    const changedPlan = (await env.plan()).plan.changes[0]!;
    expect(changedPlan.upload).toMatchObject({
      reason: "changed",
      previous_digest: status.source_upload?.digest,
    });
    expect(changedPlan.revision_fields).toEqual([
      "source_revision_config.graph_config_path",
      "source_revision_config.source_tarball_path",
    ]);
    const changed = await env.apply();
    expect(changed.results[0]).toMatchObject({
      action: "update",
      outcome: "converged",
      revision_status: "DEPLOYED",
    });
    expect(counts).toEqual({ urls: 2, puts: 2 });
    const after = await revisions(env, status.id!);
    expect(after).toHaveLength(3);
    expect(after[0]!.source_revision_config).toMatchObject({ graph_config_path: "agent/langgraph.json" });
    const recorded = (await loadStatusStore(env.statusDir)).objects.get("Deployment/docs")!.source_upload!;
    expect(recorded.digest).toBe(changedPlan.upload!.digest);
    expect(after[0]!.source_revision_config.source_tarball_path).toBe(recorded.object_path);

    expect((await env.apply()).results[0]!.action).toBe("noop");
    expect(counts).toEqual({ urls: 2, puts: 2 });
  });

  it("uploads again when the live tarball was replaced outside plumb", async () => {
    env = await startEnv();
    await writeSource(env.root, "1");
    await writeManifests(env.root, [sourceDoc("docs")]);
    await env.apply();
    const id = (await loadStatusStore(env.statusDir)).objects.get("Deployment/docs")!.id!;
    const other = (await call(env.cp, "POST", `/v2/deployments/${id}/upload-url`, {})).body!;
    const gzip = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect((await fetch(other.upload_url as string, { method: "PUT", body: gzip })).status).toBe(200);
    await call(env.cp, "PATCH", `/v2/deployments/${id}`, {
      source_revision_config: { source_tarball_path: other.object_path },
    });
    const change = (await env.plan()).plan.changes[0]!;
    expect(change.upload?.reason).toBe("replaced");
    expect((await env.apply()).results[0]).toMatchObject({ action: "update", outcome: "converged" });
    expect((await env.plan()).plan.changes[0]!.action).toBe("noop");
  });

  it("fails clearly when the source changed between plan and apply, and sends nothing", async () => {
    env = await startEnv();
    const counts = countUploads(env);
    await writeSource(env.root, "1");
    await writeManifests(env.root, [sourceDoc("docs")]);
    const { objects } = await env.plan();
    await writeSource(env.root, "2");
    const { applyPlan } = await import("../../src/apply/apply.js");
    const report = await applyPlan(env.ports, objects, {
      clock: env.clock,
      wait: true,
      timeoutMs: 10_000,
      concurrency: 1,
      pollIntervalMs: 10,
      previous: new Map(),
      record: async () => {},
      gitCommit: null,
    });
    expect(report.results[0]).toMatchObject({ outcome: "failed" });
    expect(report.results[0]!.message).toMatch(
      /^source_path \.\/agent changed since it was planned \(sha256:/,
    );
    expect(counts).toEqual({ urls: 0, puts: 0 });
    // Nothing was sent; the next run plans the new content and converges.
    expect(report.results[0]!.id).toBeNull();
    expect(await env.ports.controlPlane.listDeployments()).toEqual([]);
    const next = await env.apply();
    expect(next.results[0]).toMatchObject({ action: "create", outcome: "converged" });
  });

  it("converges under faults with exactly one revision per upload", async () => {
    env = await startEnv(
      {
        faults: {
          rates: [
            { kind: "500", share: 0.05 },
            { kind: "503", share: 0.05 },
            { kind: "reset", share: 0.05 },
            { kind: "lost-response", share: 0.05 },
          ],
        },
        faultSeed: 11,
      },
      new FastClock(),
    );
    const N = 24;
    await writeSource(env.root, "1");
    const docs = Array.from({ length: N }, (_, i) => sourceDoc(`src-${i}`));
    await writeManifests(env.root, docs);
    // 20% of requests fail; a create whose every attempt meets a fault is reported failed (honestly),
    // and the operator re-runs. What must hold: a re-run finishes it with no duplicate and no extra
    // revision (counted below). Listing what did not converge says why when a re-run does not.
    const applyWithRerun = async () => {
      const once = await env!.apply({ concurrency: 8 });
      return once.ok ? once : env!.apply({ concurrency: 8 });
    };
    const first = await applyWithRerun();
    expect(first.results.filter((r) => r.outcome !== "converged")).toEqual([]);
    await writeSource(env.root, "2");
    const changed = await applyWithRerun();
    expect(changed.results.filter((r) => r.outcome !== "converged")).toEqual([]);
    const all = await env.ports.controlPlane.listDeployments();
    expect(all).toHaveLength(N);
    // create, the first upload, the changed upload: three revisions each, the last one active.
    const counts = await Promise.all(all.map(async (d) => (await revisions(env!, d.id)).length));
    expect(counts.filter((c) => c !== 3)).toEqual([]);
    for (const d of all) expect(d.active_revision_id).toBe(d.latest_revision_id);
    expect((await env.apply()).summary.converged).toBe(N);
    expect((await env.plan()).plan.summary.noop).toBe(N);
  }, 30_000);
});
