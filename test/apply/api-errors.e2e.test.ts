import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyPlan } from "../../src/apply/apply.js";
import type { ApplyObject } from "../../src/apply/apply-types.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { gitrepoDoc, type Env, startEnv, writeManifests } from "../reconcile/harness.js";

// The server's 422 names fields of the request body; apply must name the manifest fields and where
// they are. validate lets nothing like this through, so the planned body is spoiled by hand (as a
// server stricter than plumb, or a newer API, would refuse it) and sent to the real control plane.

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const doc = gitrepoDoc("rejected", {
  secrets: [
    { name: "ZETA", value: "zeta-value" },
    { name: "ALPHA", value: "alpha-value" },
  ],
});

/** 1-based line and column of the first line of the manifest file matching `pattern` (at `key`). */
async function position(root: string, pattern: RegExp, key: string): Promise<string> {
  const lines = (await readFile(join(root, "deployments.yaml"), "utf8")).split("\n");
  const index = lines.findIndex((line) => pattern.test(line));
  return `deployments.yaml:${index + 1}:${(lines[index] ?? "").indexOf(key) + 1}`;
}

async function applyObjects(objects: ApplyObject[]) {
  const store = await loadStatusStore(env!.statusDir);
  return applyPlan(env!.ports, objects, {
    clock: env!.clock,
    wait: true,
    timeoutMs: 30_000,
    concurrency: 2,
    pollIntervalMs: 10,
    maxPollIntervalMs: 100,
    previous: store.objects,
    record: async (status) => void (await saveObjectStatus(env!.statusDir, status, anyFile)),
    gitCommit: null,
  });
}

describe("a 422 from the control plane", () => {
  it("create: names each rejected manifest field with file:line:col, secrets by name", async () => {
    env = await startEnv();
    await writeManifests(env.root, [doc]);
    const { objects } = await env.plan();
    const body = objects[0]!.change.request!.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    body.source_revision_config.graph_config_path = 7;
    // The body lists the secrets in another order than the manifest: index 0 here is ALPHA, the manifest's [1].
    body.secrets = [
      { name: "ALPHA", value: 5 },
      { name: "ZETA", value: "zeta-value" },
    ];

    const [result] = (await applyObjects(objects)).results;
    const pathAt = await position(env.root, /graph_config_path:/, "graph_config_path");
    const secretAt = await position(env.root, /value: alpha-value/, "value");
    expect(result).toMatchObject({ outcome: "failed", sync: "Failed" });
    expect(result!.message).toContain("POST /v2/deployments rejected by the control plane (422)");
    expect(result!.message).toContain(
      `${pathAt}: spec.source_revision_config.graph_config_path: Input should be a valid string`,
    );
    expect(result!.message).toContain(`${secretAt}: spec.secrets[1].value: Input should be a valid string`);
    expect(result!.message).not.toContain("alpha-value");
    const record = (await loadStatusStore(env.statusDir)).objects.get("Deployment/rejected")!;
    expect(record.last_error).toBe(result!.message);
  });

  it("PATCH: the same mapping for an update", async () => {
    env = await startEnv();
    await writeManifests(env.root, [doc]);
    expect((await applyObjects((await env.plan()).objects)).ok).toBe(true);
    const changed = structuredClone(doc);
    (changed.spec.source_revision_config as { repo_ref: string }).repo_ref = "develop";
    await writeManifests(env.root, [changed]);
    const { objects } = await env.plan();
    const { request } = objects[0]!.change;
    expect(request?.method).toBe("PATCH");
    const revision = (request!.body as { source_revision_config: { repo_ref: unknown } })
      .source_revision_config;
    revision.repo_ref = 99;

    const [result] = (await applyObjects(objects)).results;
    const refAt = await position(env.root, /repo_ref: develop/, "repo_ref");
    expect(result!.message).toMatch(/^PATCH \/v2\/deployments\/\S+ rejected by the control plane \(422\): /);
    expect(result!.message).toContain(
      `${refAt}: spec.source_revision_config.repo_ref: Input should be a valid string`,
    );
    const record = (await loadStatusStore(env.statusDir)).objects.get("Deployment/rejected")!;
    expect(record.last_error).toBe(result!.message);
  });
});
