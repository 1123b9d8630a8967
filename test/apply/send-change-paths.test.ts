import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sendChange } from "../../src/apply/send-change.js";
import { buildTarball } from "../../src/apply/upload/tarball.js";
import { type PlannedChange, UPLOAD_PLACEHOLDER } from "../../src/diff/plan/plan-types.js";
import type { Deployment } from "../../src/schema/deployment.js";
import {
  context,
  gitDeployment,
  newRef,
  revisions,
  setup,
  stopControlPlane,
  update,
} from "./send-change-harness.js";

// sendChange's other paths against the local control plane: creates, uploads, the platform's
// OrganizationAccess, changes judged by the revision's move alone, 429s and network failures.

const tarball = buildTarball([{ path: "langgraph.json", mode: 0o644, bytes: Buffer.from("{}") }]);
const source = { digest: "sha256:abc", pack: async () => new Uint8Array(tarball) };
const upload = {
  source_path: "./agent",
  digest: source.digest,
  previous_digest: null,
  reason: "changed" as const,
};

const internalCreate = (name: string): PlannedChange => ({
  ...update("", {}, true),
  name,
  action: "create",
  id: null,
  upload,
  request: {
    method: "POST",
    path: "/v2/deployments",
    body: {
      name,
      source: "internal_source",
      source_config: {},
      source_revision_config: { graph_config_path: "langgraph.json" },
      secrets: [],
    },
  },
});

const secretsOnly = { secrets: [{ name: "TOKEN", value: "s3cret" }] };

describe("sendChange: creates and uploads", () => {
  it("a create returns the created deployment and its first revision, not recovered", async () => {
    const s = await setup(undefined);
    const change: PlannedChange = {
      ...update("", {}, true),
      name: "fresh",
      action: "create",
      id: null,
      request: { method: "POST", path: "/v2/deployments", body: gitDeployment("fresh") },
    };
    const sent = await sendChange(s.ports, change, null, context(s.clock));
    expect(sent.deployment?.name).toBe("fresh");
    expect(sent.revisionId).toBe(sent.deployment?.latest_revision_id);
    expect(sent.revisionId).not.toBeNull();
    expect(sent.recovered).toBe(false);
    expect(sent.sourceUpload).toBeUndefined();
    expect(s.patches()).toBe(0);
  });

  it("an internal_source create uploads its source, then PATCHes its object path: the second revision is waited for", async () => {
    const s = await setup(undefined);
    // No onCreated: optional.
    const sent = await sendChange(s.ports, internalCreate("docs"), null, { ...context(s.clock), source });
    const created = sent.deployment as Deployment;
    const all = (await s.ports.controlPlane.listRevisions(created.id, { limit: 10 })).resources;
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.sourceUpload?.digest).toBe(source.digest);
    expect(sent.sourceUpload?.object_path).toMatch(/^uploads\//);
    expect(created.source_revision_config.source_tarball_path).toBe(sent.sourceUpload?.object_path);
    expect(s.patches()).toBe(1);
  });

  it("tells onCreated the created deployment before the upload", async () => {
    const s = await setup(undefined);
    const seen: string[] = [];
    const onCreated = (d: Deployment) => seen.push(d.name);
    await sendChange(s.ports, internalCreate("docs"), null, { ...context(s.clock), source, onCreated });
    expect(seen).toEqual(["docs"]);
  });

  it("an update with an upload puts the issued object path in place of the placeholder", async () => {
    const s = await setup(undefined);
    const created = await sendChange(s.ports, internalCreate("docs"), null, { ...context(s.clock), source });
    const id = created.deployment!.id;
    const body = { source_revision_config: { source_tarball_path: UPLOAD_PLACEHOLDER } };
    // Planned as an in-place change: the upload makes it revision-creating all the same.
    const change = { ...update(id, body, false), name: "docs", upload };
    const sent = await sendChange(s.ports, change, created.deployment, { ...context(s.clock), source });
    const all = (await s.ports.controlPlane.listRevisions(id, { limit: 10 })).resources;
    expect(all).toHaveLength(3);
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.sourceUpload?.object_path).not.toBe(created.sourceUpload?.object_path);
    expect(sent.deployment?.source_revision_config.source_tarball_path).toBe(sent.sourceUpload?.object_path);
  });

  it("an upload whose PATCH has no placeholder for its object path is refused unsent", async () => {
    const s = await setup(undefined);
    const change = { ...update(s.deployment.id, newRef, true), upload };
    const error = await sendChange(s.ports, change, s.deployment, { ...context(s.clock), source }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: "plan-invalid",
      message: expect.stringContaining("uploaded source"),
    });
    // Nor one whose body has no source_revision_config at all.
    const noRevision = { ...update(s.deployment.id, { secrets: [] }, true), upload };
    await expect(
      sendChange(s.ports, noRevision, s.deployment, { ...context(s.clock), source }),
    ).rejects.toMatchObject({ code: "plan-invalid" });
    expect(s.patches()).toBe(0);
    expect(await revisions(s)).toHaveLength(1);
  });

  it("an update without a deployment id is refused: plan-invalid, naming the deployment", async () => {
    const s = await setup(undefined);
    const change = { ...update(s.deployment.id, newRef, true), id: null };
    await expect(sendChange(s.ports, change, s.deployment, context(s.clock))).rejects.toMatchObject({
      code: "plan-invalid",
      message: expect.stringContaining("update of svc has no deployment id"),
    });
    expect(s.patches()).toBe(0);
  });
});

describe("sendChange: OrganizationAccess", () => {
  const orgChange = (invites: boolean): PlannedChange => ({
    ...update("", {}, false),
    kind: "OrganizationAccess",
    name: "org",
    id: null,
    request: { method: "PATCH", path: "/api/v1/orgs/current", body: { invites_enabled: invites } },
  });

  it("is sent to the platform API: no deployment, no revision", async () => {
    const s = await setup(undefined);
    const before = await s.ports.platformClient.getOrganization();
    const sent = await sendChange(s.ports, orgChange(!before.invites_enabled), null, context(s.clock));
    expect(sent).toEqual({ deployment: null, revisionId: null, recovered: false });
    expect((await s.ports.platformClient.getOrganization()).invites_enabled).toBe(!before.invites_enabled);
    expect(s.patches()).toBe(1);
  });

  it("without a platform client: no-platform-client, nothing sent", async () => {
    const s = await setup(undefined);
    const ports = { ...s.ports, platform: undefined };
    await expect(sendChange(ports, orgChange(true), null, context(s.clock))).rejects.toMatchObject({
      code: "no-platform-client",
      message: expect.stringContaining("platform API"),
    });
    expect(s.patches()).toBe(0);
  });
});

describe("sendChange: judged by the revision's move", () => {
  it("a secrets-only PATCH whose response was lost but landed is not resent", async () => {
    const s = await setup({ rates: [{ kind: "lost-response", share: 1 }], max: 1 });
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, secretsOnly, true),
      s.deployment,
      context(s.clock),
    );
    const all = await revisions(s);
    expect(s.patches()).toBe(1);
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
  });

  it("a secrets-only PATCH that a 5xx did not apply is resent, also from the baseline it reads itself", async () => {
    for (const before of ["given", "read"] as const) {
      const s = await setup({ rates: [{ kind: "500", share: 1 }], max: 1 });
      const change = update(s.deployment.id, secretsOnly, true);
      const sent = await sendChange(
        s.ports,
        change,
        before === "given" ? s.deployment : null,
        context(s.clock),
      );
      const all = await revisions(s);
      expect(s.patches()).toBe(2);
      expect(all).toHaveLength(2);
      expect(sent.revisionId).toBe(all[0]?.id);
      expect(sent.revisionId).not.toBe(s.deployment.latest_revision_id);
    }
  });

  it("source_revision_config null proves nothing: a lost PATCH that landed is not resent", async () => {
    const s = await setup({ rates: [{ kind: "lost-response", share: 1 }], max: 1 });
    const body = { source_revision_config: null, ...secretsOnly };
    await sendChange(s.ports, update(s.deployment.id, body, true), s.deployment, context(s.clock));
    expect(s.patches()).toBe(1);
    expect(await revisions(s)).toHaveLength(2);
  });

  it("a field the PATCH sets to null (unchanged) does not count against it: landed, not resent", async () => {
    const s = await setup({ rates: [{ kind: "lost-response", share: 1 }], max: 1 });
    const body = { source_revision_config: { repo_ref: "release", graph_config_path: null } };
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, body, true),
      s.deployment,
      context(s.clock),
    );
    expect(s.patches()).toBe(1);
    expect(await revisions(s)).toHaveLength(2);
    expect(sent.deployment?.source_revision_config.graph_config_path).toBe("langgraph.json");
  });
});

describe("sendChange: another writer's revision", () => {
  it("matching one field the PATCH sets is not enough: every field must hold, else it is resent", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-send-change-"));
    const planned = await setup(undefined, 50, { data: { dataDir } });
    // After the plan, someone else's revision sets one of the PATCH's two fields, not the other.
    await planned.ports.controlPlane.patchDeployment(planned.deployment.id, {
      source_revision_config: { graph_config_path: "agent.json" },
    });
    await stopControlPlane();
    const s = await setup({ rates: [{ kind: "500", share: 1 }], max: 1 }, 50, {
      data: { dataDir, deployment: planned.deployment },
    });
    const body = { source_revision_config: { repo_ref: "release", graph_config_path: "agent.json" } };
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, body, true),
      s.deployment,
      context(s.clock),
    );
    const all = await revisions(s);
    expect(s.patches()).toBe(2);
    expect(all).toHaveLength(3);
    expect(sent.revisionId).toBe(all[0]?.id);
    expect(sent.deployment?.source_revision_config.repo_ref).toBe("release");
  });
});

describe("sendChange: failures that are not the server's work", () => {
  it("a 429 the client gave up on is waited out and sent again", async () => {
    const s = await setup({ rates: [{ kind: "429", share: 1 }], max: 1 }, 50, { clientAttempts: 1 });
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, newRef, true),
      s.deployment,
      context(s.clock),
    );
    const all = await revisions(s);
    expect(s.patches()).toBe(2);
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
  });

  it("a PATCH that never reached the server (connection refused) is sent again after checking", async () => {
    const refused = () =>
      new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      });
    // The client does not retry it itself: sendChange judges it (no response: it checks first).
    const s = await setup(undefined, 50, { firstPatchFails: refused, clientAttempts: 1 });
    // A GET first, so the client knows this server answers (a refusal is then a restart, not a wrong URL).
    await s.ports.controlPlane.getDeployment(s.deployment.id);
    const sent = await sendChange(
      s.ports,
      update(s.deployment.id, newRef, true),
      s.deployment,
      context(s.clock),
    );
    const all = await revisions(s);
    expect(s.patches()).toBe(2);
    expect(all).toHaveLength(2);
    expect(sent.revisionId).toBe(all[0]?.id);
  });

  it("an in-place change with no deployment read sends its PATCH without reading one", async () => {
    const s = await setup(undefined);
    const change = update(s.deployment.id, { source_config: { build_command: "make" } }, false);
    const sent = await sendChange(s.ports, change, null, context(s.clock));
    expect(sent.deployment?.source_config.build_command).toBe("make");
    expect(sent.recovered).toBe(false);
    expect(s.gets()).toBe(0);
    expect(s.patches()).toBe(1);
  });

  it("an update with the deployment given reads nothing before its PATCH", async () => {
    const s = await setup(undefined);
    await sendChange(s.ports, update(s.deployment.id, newRef, true), s.deployment, context(s.clock));
    expect(s.gets()).toBe(0);
  });

  it("an aborted signal reaches every request: nothing is read, created or sent", async () => {
    const s = await setup(undefined);
    const signal = AbortSignal.abort(new Error("stopped"));
    const ctx = { ...context(s.clock), signal };
    const change = update(s.deployment.id, newRef, true);
    await expect(sendChange(s.ports, change, null, ctx)).rejects.toThrow("stopped");
    await expect(sendChange(s.ports, change, s.deployment, ctx)).rejects.toThrow("stopped");
    const create = { ...internalCreate("late"), upload: undefined };
    await expect(sendChange(s.ports, create, null, ctx)).rejects.toThrow("stopped");
    expect(await revisions(s)).toHaveLength(1);
    expect(await s.ports.controlPlane.listDeployments()).toHaveLength(1);
  });
});
