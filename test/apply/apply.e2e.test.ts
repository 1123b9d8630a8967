import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { type Env, call, containerDoc, gitrepoDoc, startEnv, writeManifests } from "../reconcile/harness.js";

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const revisions = async (e: Env, id: string) =>
  (await call(e.cp, "GET", `/v2/deployments/${id}/revisions?limit=100`)).body!.resources as Array<{
    id: string;
    status: string;
  }>;

describe("apply against the local control plane", () => {
  it("creates, waits for DEPLOYED, records status; a second apply is a no-op", async () => {
    env = await startEnv({}, systemClock, { ...process.env, PLUMB_TEST_TOKEN: "s3cret-value" });
    await writeManifests(env.root, [
      gitrepoDoc("alpha", { secrets: [{ name: "TOKEN", valueFrom: { env: "PLUMB_TEST_TOKEN" } }] }),
      containerDoc("beta", "registry.example/beta:1"),
    ]);
    const report = await env.apply();
    expect(report.ok).toBe(true);
    expect(report.summary.converged).toBe(2);
    for (const r of report.results) {
      expect(r.revision_status).toBe("DEPLOYED");
      expect(r.sync).toBe("Synced");
      expect(r.health).toBe("Healthy");
    }
    const store = await loadStatusStore(env.statusDir);
    const alpha = store.objects.get("Deployment/alpha")!;
    expect(alpha.active_revision_id).toBe(alpha.latest_revision_id);
    expect(alpha.git_commit).toBe("test-commit");
    expect(alpha.secret_fingerprints?.values.TOKEN).toMatch(/^scrypt\$/);
    expect(JSON.stringify(alpha)).not.toContain("s3cret-value");

    // Second run: plan knows the secret fingerprint, so nothing is sent and no revision is created.
    const before = await revisions(env, alpha.id!);
    const again = await env.apply();
    expect(again.results.map((r) => r.action)).toEqual(["noop", "noop"]);
    expect(again.ok).toBe(true);
    expect(await revisions(env, alpha.id!)).toHaveLength(before.length);
  });

  it("applies each field class: in place without a revision, revision fields and secrets with exactly one", async () => {
    env = await startEnv();
    await writeManifests(env.root, [gitrepoDoc("gamma", { secrets: [{ name: "A", value: "1" }] })]);
    await env.apply();
    const id = (await loadStatusStore(env.statusDir)).objects.get("Deployment/gamma")!.id!;
    const count = async () => (await revisions(env!, id)).length;
    expect(await count()).toBe(1);

    // In place: build_on_push.
    const inPlace = gitrepoDoc("gamma", { secrets: [{ name: "A", value: "1" }] });
    (inPlace.spec.source_config as Record<string, unknown>).build_on_push = true;
    await writeManifests(env.root, [inPlace]);
    let report = await env.apply();
    expect(report.results[0]).toMatchObject({ action: "update", outcome: "converged", revision_id: null });
    expect(await count()).toBe(1);

    // Revision field and a secret value at once: one PATCH, one revision.
    const both = gitrepoDoc("gamma", { secrets: [{ name: "A", value: "2" }] });
    (both.spec.source_config as Record<string, unknown>).build_on_push = true;
    both.spec.source_revision_config = { repo_ref: "release", graph_config_path: "langgraph.json" };
    await writeManifests(env.root, [both]);
    report = await env.apply();
    expect(report.results[0]).toMatchObject({ outcome: "converged", revision_status: "DEPLOYED" });
    expect(await count()).toBe(2);
    const live = (await call(env.cp, "GET", `/v2/deployments/${id}`)).body!;
    expect(live.source_revision_config.repo_ref).toBe("release");
    expect(live.active_revision_id).toBe(report.results[0]!.revision_id);
  });

  it("fails fast on a failed build with the revision's status_message, and applies the others", async () => {
    env = await startEnv();
    await writeManifests(env.root, [
      containerDoc("ok-one", "registry.example/ok:1"),
      containerDoc("broken", "registry.example/fail-build:1"),
    ]);
    const report = await env.apply();
    expect(report.ok).toBe(false);
    const broken = report.results.find((r) => r.name === "broken")!;
    expect(broken).toMatchObject({
      outcome: "failed",
      revision_status: "BUILD_FAILED",
      sync: "Failed",
      health: "Degraded",
    });
    expect(broken.message).toContain("Forced failure: fail-build");
    expect(report.results.find((r) => r.name === "ok-one")!.outcome).toBe("converged");
    const status = (await loadStatusStore(env.statusDir)).objects.get("Deployment/broken")!;
    expect(status.last_error).toContain("fail-build");
    expect(status.sync).toBe("Failed");
  });

  it("follows a superseding revision to DEPLOYED", async () => {
    env = await startEnv({ revisionSeconds: 0.05 });
    await writeManifests(env.root, [containerDoc("delta", "registry.example/delta:1")]);
    await env.apply();
    const id = (await loadStatusStore(env.statusDir)).objects.get("Deployment/delta")!.id!;
    await writeManifests(env.root, [containerDoc("delta", "registry.example/delta:2")]);
    // Someone else patches right after our PATCH, while our revision is still building.
    const port = env.ports.deployments;
    const patch = port.patchDeploymentOnce.bind(port);
    port.patchDeploymentOnce = async (pid, body, o) => {
      const result = await patch(pid, body, o);
      const other = await call(env!.cp, "PATCH", `/v2/deployments/${pid}`, {
        secrets: [{ name: "X", value: "y" }],
      });
      expect(other.status).toBe(200);
      return result;
    };
    const report = await env.apply();
    const result = report.results[0]!;
    expect(result.outcome).toBe("converged");
    expect(result.superseded_by).not.toBeNull();
    const revs = await revisions(env, id);
    expect(revs.find((r) => r.id !== result.superseded_by && r.status === "SKIPPED")).toBeDefined();
    expect(revs[0]).toMatchObject({ id: result.superseded_by, status: "DEPLOYED" });
  });

  it("skips a refused change and still applies the others", async () => {
    env = await startEnv();
    await writeManifests(env.root, [gitrepoDoc("eps"), containerDoc("zeta", "registry.example/z:1")]);
    await env.apply();
    const changed = gitrepoDoc("eps");
    (changed.spec.source_config as Record<string, unknown>).repo_url = "https://github.com/acme/other";
    await writeManifests(env.root, [changed, containerDoc("zeta", "registry.example/z:2")]);
    const report = await env.apply();
    expect(report.results.map((r) => [r.name, r.outcome])).toEqual([
      ["eps", "skipped"],
      ["zeta", "converged"],
    ]);
    const record = (await loadStatusStore(env.statusDir)).objects.get("Deployment/eps")!;
    expect(record.sync).toBe("Refused");
    // The field is named once, at the start of the message, in the result and in last_error.
    const message = report.results[0]!.message!;
    expect(message).toMatch(/^source_config\.repo_url cannot change after creation/);
    expect(message.split("source_config.repo_url").length).toBe(2);
    expect(record.last_error).toBe(message);
  });
});

describe("OrganizationAccess", () => {
  it("is applied through the platform API and recorded", async () => {
    env = await startEnv();
    const org = (jit: boolean, invites: boolean) => ({
      apiVersion: "plumb/v1",
      kind: "OrganizationAccess",
      metadata: { name: "acme" },
      spec: { jit_provisioning_enabled: jit, invites_enabled: invites },
    });
    const before = (await call(env.cp, "GET", "/api/v1/organizations/current/info")).body!;
    await writeManifests(env.root, [org(!before.jit_provisioning_enabled, !before.invites_enabled)]);
    const report = await env.apply();
    expect(report.results[0]).toMatchObject({
      kind: "OrganizationAccess",
      action: "update",
      outcome: "converged",
    });
    const after = (await call(env.cp, "GET", "/api/v1/organizations/current/info")).body!;
    expect(after.jit_provisioning_enabled).toBe(!before.jit_provisioning_enabled);
    expect(after.invites_enabled).toBe(!before.invites_enabled);
    expect((await loadStatusStore(env.statusDir)).objects.get("OrganizationAccess/acme")).toMatchObject({
      sync: "Synced",
      health: "Healthy",
    });
    expect((await env.apply()).results[0]!.action).toBe("noop");
  });
});
