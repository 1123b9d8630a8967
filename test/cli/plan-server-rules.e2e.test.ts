import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { copyFlatExample } from "../support/flat-example.js";

// plan knows the installation's fixed create rules (docs/plan.md "Installation rules"): the
// sources its mode can create, its integrations and listeners. Refused with file:line, after
// reading and before anything is sent.

let saas: RunningControlPlane;
let selfHosted: RunningControlPlane;
const dirs: string[] = [];

beforeAll(async () => {
  saas = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  selfHosted = await startControlPlane({
    mode: "self-hosted",
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
  });
});
afterAll(async () => {
  await saas.stop();
  await selfHosted.stop();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function example(name: "saas" | "self-hosted"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-rules-"));
  dirs.push(dir);
  await copyFlatExample(name, dir);
  return dir;
}

type RunOptions = { env?: Record<string, string>; hideInfo?: boolean };

async function plan(server: RunningControlPlane, args: string[], options: RunOptions = {}) {
  let out = "";
  let err = "";
  const requests: string[] = [];
  const fetching: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    requests.push(`${init?.method ?? "GET"} ${url.pathname}`);
    // A hosted service need not serve /info: answer as one that does not.
    if (options.hideInfo && url.pathname === "/info") return new Response("not found", { status: 404 });
    return fetch(input, init);
  };
  process.exitCode = 0;
  let thrown: unknown;
  try {
    await planCommand({
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
      env: {
        PLUMB_API_URL: server.url,
        PLUMB_API_KEY: DEFAULT_API_KEY,
        OPENAI_API_KEY: "sk-test",
        ...options.env,
      },
      fetch: fetching,
    }).parseAsync(args, { from: "user" });
  } catch (error) {
    thrown = error;
  }
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code, requests, thrown };
}

const writes = (requests: string[]) => requests.filter((r) => !r.startsWith("GET "));

describe("plan refuses what the installation cannot create", () => {
  it("external_container on a SaaS control plane: file:line at spec.source, nothing sent", async () => {
    const dir = await example("self-hosted");
    const result = await plan(saas, [dir]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /ops-agent\.yaml:11:3: .*source external_container is only available on self-hosted installations; this control plane is saas \(reported by http:\/\/127\.0\.0\.1:\d+\/info\)/,
    );
    expect(result.out).toContain("billing-agent.yaml");
    expect(result.requests).toContain("GET /info");
    expect(writes(result.requests)).toEqual([]);
  });

  it("gitrepo on a self-hosted control plane", async () => {
    const dir = await example("saas");
    const result = await plan(selfHosted, [dir, "--target", "support-agent", "--target", "triage-agent"]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /support-agent\.yaml:\d+:\d+: .*source gitrepo is only available on hosted \(SaaS\)/,
    );
    expect(result.out).not.toContain("triage-agent"); // internal_container: any installation
  });

  it("the same manifests plan green where the mode allows them", async () => {
    const dir = await example("self-hosted");
    const result = await plan(selfHosted, [dir]);
    expect(result.thrown).toBeUndefined();
    expect(result.code).toBe(0);
    expect(result.out).toContain("ops-agent");
  });

  it("uses PLUMB_MODE or --mode for a server that does not report its mode", async () => {
    const dir = await example("self-hosted");
    const fromEnv = await plan(saas, [dir], { hideInfo: true, env: { PLUMB_MODE: "saas" } });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.out).toContain("this control plane is saas (PLUMB_MODE)");
    const fromFlag = await plan(saas, [dir, "--mode", "saas"], { hideInfo: true });
    expect(fromFlag.out).toContain("(--mode)");
    // Nothing says: the rule cannot be known, the plan goes on (the server decides on apply).
    const unknown = await plan(saas, [dir], { hideInfo: true });
    expect(unknown.code).toBe(0);
  });

  it("refuses a setting that contradicts what the server reports, and a bad value", async () => {
    const dir = await example("self-hosted");
    const contradicted = await plan(selfHosted, [dir], { env: { PLUMB_MODE: "saas" } });
    expect(String(contradicted.thrown)).toMatch(
      /PLUMB_MODE says saas, but the control plane at .* reports self-hosted/,
    );
    const bad = await plan(selfHosted, [dir, "--mode", "cloud"]);
    expect(String(bad.thrown)).toContain('--mode must be saas or self-hosted, got "cloud"');
  });

  it("refuses an unknown listener with file:line at listener_id", async () => {
    const dir = await example("self-hosted");
    const file = join(dir, "ops-agent.yaml");
    const text = await readFile(file, "utf8");
    await writeFile(
      file,
      text.replace("10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-0000000000ff"),
    );
    const result = await plan(selfHosted, [dir]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /ops-agent\.yaml:13:\d+: .*listener 10000000-0000-4000-8000-0000000000ff is not one of this control plane's \(it has 10000000-0000-4000-8000-000000000001/,
    );
    expect(result.requests).toContain("GET /v2/listeners");
  });

  it("refuses an unknown integration with file:line at integration_id", async () => {
    const dir = await example("saas");
    const file = join(dir, "support-agent.yaml");
    const text = await readFile(file, "utf8");
    await writeFile(
      file,
      text.replace(/integration_id: \S+/, "integration_id: 20000000-0000-4000-8000-0000000000ff"),
    );
    const result = await plan(saas, [dir, "--target", "support-agent"]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /support-agent\.yaml:\d+:\d+: .*integration 20000000-0000-4000-8000-0000000000ff is not one of this control plane's/,
    );
    expect(result.requests).toContain("GET /v1/integrations/gitrepo/install");
  });

  it("a plan that creates nothing reads none of it", async () => {
    const dir = await example("self-hosted");
    const applied = await plan(selfHosted, [dir]);
    expect(applied.requests).toContain("GET /info");
    const { applyCommand } = await import("../../src/cli/sync/apply.js");
    process.exitCode = 0;
    await applyCommand({
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: { PLUMB_API_URL: selfHosted.url, PLUMB_API_KEY: DEFAULT_API_KEY, OPENAI_API_KEY: "sk-test" },
    }).parseAsync([dir, "--yes", "--no-wait"], { from: "user" });
    expect(process.exitCode ?? 0).toBe(0);
    const again = await plan(selfHosted, [dir]);
    expect(again.requests).not.toContain("GET /info");
    expect(again.requests).not.toContain("GET /v2/listeners");
  });
});
