import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createControlPlaneClient, type ControlPlaneClient } from "../../src/api/control-plane-client.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fingerprintSecrets } from "../../src/diff/secrets/secret-fingerprint.js";

// plumb plan end to end against the real local control plane: deployments created through the API,
// manifests on disk, the command run with its flags; every request it sends is counted.

let server: RunningControlPlane;
let api: ControlPlaneClient;
let dir: string;

const gitrepo = (name: string, ref = "main", extra: Record<string, unknown> = {}) => ({
  name,
  source: "gitrepo" as const,
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: `https://github.com/acme/${name}`,
    deployment_type: "dev" as const,
    build_on_push: false,
  },
  source_revision_config: { repo_ref: ref, graph_config_path: "langgraph.json" },
  secrets: [],
  ...extra,
});
const manifest = (body: ReturnType<typeof gitrepo>, spec: Record<string, unknown> = {}) =>
  stringify({
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: body.name },
    spec: {
      source: body.source,
      source_config: body.source_config,
      source_revision_config: body.source_revision_config,
      ...spec,
    },
  });

async function run(args: string[], env: Record<string, string> = {}) {
  let out = "";
  let err = "";
  const requests: string[] = [];
  const counting: typeof fetch = async (input, init) => {
    requests.push(
      `${init?.method ?? "GET"} ${new URL(input instanceof Request ? input.url : String(input)).pathname}`,
    );
    return fetch(input, init);
  };
  process.exitCode = 0;
  await planCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    env: { PLUMB_API_URL: server.url, PLUMB_API_KEY: DEFAULT_API_KEY, ...env },
    fetch: counting,
  }).parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code, requests };
}

beforeAll(async () => {
  server = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  api = createControlPlaneClient({ apiUrl: server.url, apiKey: DEFAULT_API_KEY });
});
afterAll(async () => server.stop());
afterEach(async () => rm(dir, { recursive: true, force: true }));

async function manifests(files: Record<string, string>) {
  dir = await mkdtemp(join(tmpdir(), "plumb-plan-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

describe("plumb plan against the local control plane", () => {
  it("stops on invalid manifests before any API call, with the validate output", async () => {
    await manifests({
      "bad.yaml": "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {source: nope}\n",
    });
    const result = await run([dir]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/bad\.yaml:\d+:\d+: /);
    expect(result.requests).toEqual([]);
  });

  it("plans create, update, noop and refused from one list call, and converges once the body is sent", async () => {
    const same = await api.createDeployment(gitrepo("e2e-same"));
    const moved = await api.createDeployment(gitrepo("e2e-moved"));
    await api.createDeployment(gitrepo("e2e-locked"));
    const locked = gitrepo("e2e-locked");
    locked.source_config.repo_url = "https://github.com/acme/elsewhere";
    await manifests({
      "same.yaml": manifest(gitrepo("e2e-same")),
      "moved.yaml": manifest(gitrepo("e2e-moved", "release", {}), { source_config: { build_on_push: true } }),
      "locked.yaml": manifest(locked),
      "new.yaml": manifest(gitrepo("e2e-new")),
    });
    const result = await run([dir, "--output", "json"]);
    // One list call; the create also reads the installation's rules (its mode and integrations).
    expect(result.requests).toEqual([
      "GET /v2/deployments",
      "GET /info",
      "GET /v1/integrations/gitrepo/install",
    ]);
    expect(result.code).toBe(1); // refused
    const plan = JSON.parse(result.out);
    const byName = Object.fromEntries(plan.changes.map((c: { name: string }) => [c.name, c]));
    expect(plan.summary).toEqual({ create: 1, update: 1, noop: 1, refused: 1, orphan: 0, delete: 0 });
    expect(byName["e2e-same"]).toMatchObject({ action: "noop", id: same.id });
    expect(byName["e2e-locked"].errors[0].field).toBe("source_config.repo_url");
    expect(byName["e2e-locked"].errors[0].message).toContain("locked.yaml:");
    const update = byName["e2e-moved"];
    expect(update).toMatchObject({
      action: "update",
      id: moved.id,
      new_revision: true,
      revision_fields: ["source_revision_config.repo_ref"],
      in_place_fields: ["source_config.build_on_push"],
      request: {
        method: "PATCH",
        path: `/v2/deployments/${moved.id}`,
        body: { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "release" } },
      },
    });

    await api.patchDeployment(moved.id, update.request.body);
    const again = await run([dir, "--output", "json", "--target", "e2e-moved", "--detailed-exitcode"]);
    expect(JSON.parse(again.out).changes[0].action).toBe("noop");
    expect(again.code).toBe(0);
  });

  it("refuses a tag repo_ref while build_on_push is true live, as the server would (400)", async () => {
    const pushed = gitrepo("e2e-tagged");
    pushed.source_config.build_on_push = true;
    const live = await api.createDeployment(pushed);
    const { build_on_push: _unset, ...sourceConfig } = pushed.source_config;
    await manifests({
      "tagged.yaml": manifest({
        ...pushed,
        source_config: sourceConfig as typeof pushed.source_config,
        source_revision_config: { repo_ref: "refs/tags/v1.0.0", graph_config_path: "langgraph.json" },
      }),
    });
    const result = await run([dir]);
    expect(result.code).toBe(1);
    expect(result.out).toContain("! refused Deployment e2e-tagged");
    expect(result.out).toMatch(/at tagged\.yaml:\d+\): set source_config\.build_on_push: false/);
    // The body plan would otherwise have sent is the one the server refuses.
    await expect(
      api.patchDeployment(live.id, { source_revision_config: { repo_ref: "refs/tags/v1.0.0" } }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("exits 2 with --detailed-exitcode when there are changes, and prints text and Markdown", async () => {
    await manifests({ "x.yaml": manifest(gitrepo("e2e-detailed")) });
    const text = await run([dir, "--detailed-exitcode"]);
    expect(text.code).toBe(2);
    expect(text.out).toContain("+ create Deployment e2e-detailed");
    expect(text.out).not.toContain("\u001b["); // not a TTY: no colour
    const md = await run([dir, "--output", "markdown"]);
    expect(md.code).toBe(0);
    expect(md.out).toMatch(/^<!-- plumb plan -->\n### plumb plan\n/);
    expect(md.out).toContain("<details>");
    // The comment names the control plane (never its key) and the file from the repository root.
    expect(md.out).toContain(`control plane \`${server.url}\``);
    expect(md.out).not.toContain(DEFAULT_API_KEY);
  });

  it("marks where a plan's time goes on the performance timeline, in order, once per run", async () => {
    await manifests({ "x.yaml": manifest(gitrepo("e2e-phases")) });
    for (let i = 0; i < 2; i++) expect((await run([dir])).code).toBe(0);
    const phases = ["start", "loaded", "live-read", "fingerprints-checked", "built", "formatted"];
    const marks = phases.map((phase) => performance.getEntriesByName(`plumb:plan:${phase}`, "mark"));
    expect(marks.map((m) => m.length)).toEqual(phases.map(() => 1)); // the second run replaced the first's
    const at = Object.fromEntries(phases.map((phase, i) => [phase, marks[i]![0]!.startTime]));
    expect(at.start).toBeLessThanOrEqual(at.loaded!);
    expect(at.loaded).toBeLessThanOrEqual(Math.min(at["live-read"]!, at["fingerprints-checked"]!));
    expect(Math.max(at["live-read"]!, at["fingerprints-checked"]!)).toBeLessThanOrEqual(at.built!);
    expect(at.built).toBeLessThanOrEqual(at.formatted!);
  });

  it("reads secret fingerprints from the status store: unknown first, then in sync, then changed", async () => {
    const created = await api.createDeployment(
      gitrepo("e2e-secrets", "main", { secrets: [{ name: "TOKEN", value: "t0ken-1" }] }),
    );
    await manifests({
      "s.yaml": manifest(gitrepo("e2e-secrets"), {
        secrets: [{ name: "TOKEN", valueFrom: { env: "E2E_TOKEN" } }],
      }),
    });
    const unknown = await run([dir, "--output", "json"], { E2E_TOKEN: "t0ken-1" });
    expect(JSON.parse(unknown.out).changes[0].warnings[0].message).toBe(
      "secret values unknown, will be sent",
    );
    expect(unknown.out).not.toContain("t0ken-1");

    const statusDir = join(dir, "status");
    await mkdir(statusDir);
    const record = {
      kind: "Deployment",
      name: "e2e-secrets",
      id: created.id,
      latest_revision_id: created.latest_revision_id,
      active_revision_id: null,
      revision_status: null,
      sync: "Synced",
      health: "Healthy",
      git_commit: null,
      manifest_digest: null,
      secret_fingerprints: fingerprintSecrets([{ name: "TOKEN", value: "t0ken-1" }]),
      updated_at: "2026-01-01T00:00:00Z",
      last_error: null,
    };
    await writeFile(join(statusDir, "deployment.e2e-secrets.json"), JSON.stringify(record));
    const synced = await run([dir, "--output", "json", "--status-dir", statusDir], { E2E_TOKEN: "t0ken-1" });
    expect(JSON.parse(synced.out).changes[0].action).toBe("noop");
    const rotated = await run([dir, "--status-dir", statusDir], { E2E_TOKEN: "t0ken-2" });
    expect(rotated.out).toContain("secrets: TOKEN (sensitive, changed)");
    expect(rotated.out).not.toContain("t0ken-2");
  });

  it("plans OrganizationAccess with one organization GET and says who can join after", async () => {
    await manifests({
      "org.yaml": stringify({
        apiVersion: "plumb/v1",
        kind: "OrganizationAccess",
        metadata: { name: "acme" },
        spec: { jit_provisioning_enabled: false, invites_enabled: false },
      }),
    });
    const result = await run([dir, "--output", "json"]);
    expect(result.requests.sort()).toEqual(["GET /api/v1/organizations/current/info", "GET /v2/deployments"]);
    const [change] = JSON.parse(result.out).changes;
    expect(change.kind).toBe("OrganizationAccess");
    if (change.action === "update") {
      expect(change.request.path).toBe("/api/v1/organizations/current/info");
    }
    expect(change.effect).toMatch(/^closed/);
  });

  it("refuses a deployment whose secret cannot be read, and plans the others", async () => {
    await manifests({
      "s.yaml": manifest(gitrepo("e2e-nosecret"), {
        secrets: [{ name: "TOKEN", valueFrom: { env: "E2E_MISSING" } }],
      }),
    });
    const result = await run([dir, "--output", "json"]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out).changes[0]).toMatchObject({ action: "refused", request: null });
  });
});
