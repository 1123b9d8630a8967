import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { appliedDigest } from "../../src/status/checks/checks-record-applied.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { TEST_POLL } from "./reconcile-helpers.js";

// plumb promote against two real control planes (staging and prod, each on a free loopback port
// with its own key). Staging's clock can be moved forward, so the soak gate is judged on the
// control plane's own time (its revisions' updated_at and its Date header) without waiting.
// Each gate refuses alone while the others hold; then the promotion is written and plan --env prod
// shows exactly it; --branch commits it with the evidence; a branch as repo_ref is refused.

const STAGING_KEY = "staging-key-0123456789abcdef";
const PROD_KEY = "prod-key-0123456789abcdef0123";
const MINUTE = 60_000;

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;
let offset = 0;
const stagingClock = { now: () => Date.now() + offset, sleep: systemClock.sleep };

const environment = (name: string, url: string, key: string, extra = "") => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: ${url}
  api_key: ${key}
  mode: saas
${extra}`;

const PROMOTION = `  promotion:
    from: staging
    gates:
      deployed: true
      soak: 30m
      checks: {min_pass_ratio: 0.9, max_latency_p95_ms: 2000}
`;

const SUPPORT = (stagingRef: string) => `# The support agent: one definition, two environments.
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: dev
  source_revision_config:
    repo_ref: ${stagingRef} # staging runs the release candidate
    graph_config_path: langgraph.json
environments:
  prod:
    spec:
      source_config: {deployment_type: prod}
      # prod runs what staging verified
      source_revision_config: {repo_ref: refs/tags/v1.4.2}
`;

const TRIAGE = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: triage-agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/triage-agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
environments:
  prod:
    spec:
      source_revision_config: {repo_ref: refs/tags/v0.9.0}
`;

const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
    cwd: dir,
    encoding: "utf8",
  });

type Cmd = typeof planCommand;
async function run(command: Cmd, args: string[]) {
  let out = "";
  let err = "";
  process.exitCode = 0;
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    env: { STAGING_API_URL: staging.url, STAGING_API_KEY: STAGING_KEY, PLUMB_API_URL: "http://127.0.0.1:9" },
    poll: TEST_POLL,
  };
  let error: (Error & { code?: string }) | undefined;
  await command(io)
    .parseAsync(args, { from: "user" })
    .catch((e: Error) => (error = e));
  const code = error ? 1 : process.exitCode;
  process.exitCode = 0;
  return { out, err, code, error };
}
const promote = (...args: string[]) => run(promoteCommand, [dir, "--to", "prod", ...args]);

async function api<T>(cp: RunningControlPlane, key: string, path: string): Promise<T> {
  const res = await fetch(`${cp.url}${path}`, { headers: { "x-api-key": key } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}
type Live = { id: string; name: string; latest_revision_id: string };
const deployment = async (cp: RunningControlPlane, key: string, name: string) =>
  (await api<{ resources: Live[] }>(cp, key, "/v2/deployments")).resources.find((d) => d.name === name)!;
const revisionCount = async (cp: RunningControlPlane, key: string, name: string) => {
  const d = await deployment(cp, key, name);
  return (await api<{ resources: unknown[] }>(cp, key, `/v2/deployments/${d.id}/revisions?limit=100`))
    .resources.length;
};

/** What apply's verify records for a revision (src/status/checks-record.ts), written into staging's record. */
async function recordChecks(revisionId: string, passed: number, p95: number, at = new Date().toISOString()) {
  const file = join(dir, ".plumb", "status", "staging", "deployment.support-agent.json");
  const record = JSON.parse(await readFile(file, "utf8")) as ObjectStatus;
  const checks = {
    revision_id: revisionId,
    at,
    runs: 10,
    passed,
    pass_ratio: passed / 10,
    latency_ms: { p50: 400, p95, max: p95 + 100 },
    // Verified what the record says is applied (src/status/checks-record-applied.ts).
    applied_digest: appliedDigest(record),
  };
  await writeFile(file, JSON.stringify({ ...record, checks }, null, 2));
}

async function applyStaging(ref: string) {
  await writeFile(join(dir, "support-agent.yaml"), SUPPORT(ref));
  git("commit", "-qam", `staging runs ${ref}`);
  const applied = await run(applyCommand, [dir, "--env", "staging", "--yes"]);
  expect(applied.code).toBe(0);
  return (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
}

const blockedGates = (out: string) => [...out.matchAll(/✗ (deployed|soak|checks) fails: /g)].map((m) => m[1]);

beforeAll(async () => {
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  staging = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    clock: stagingClock,
    ...grant(STAGING_KEY),
  });
  prod = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...grant(PROD_KEY) });
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-"));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "prod.key"), `${PROD_KEY}\n`);
  await writeFile(
    join(dir, "environments", "staging.yaml"),
    environment("staging", "{env: STAGING_API_URL}", "{env: STAGING_API_KEY}"),
  );
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environment("prod", prod.url, "{file: prod.key}", PROMOTION),
  );
  await writeFile(join(dir, "support-agent.yaml"), SUPPORT("refs/tags/v1.5.0"));
  await writeFile(join(dir, "triage-agent.yaml"), TRIAGE);
  await writeFile(join(dir, ".gitignore"), ".plumb/\n*.key\n");
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "two environments");
  const applied = await run(applyCommand, [dir, "--yes"]);
  expect(applied.err).toBe("");
  expect(applied.code).toBe(0);
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("plumb promote --to prod", () => {
  it("deployed: a change in git not applied to staging yet blocks, alone", async () => {
    const revision = (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
    offset += 60 * MINUTE;
    await recordChecks(revision, 10, 900);
    await writeFile(join(dir, "support-agent.yaml"), SUPPORT("refs/tags/v1.6.0"));
    try {
      const result = await promote("--target", "support-agent");
      expect(result.error?.code).toBe("promotion-blocked");
      expect(blockedGates(result.out)).toEqual(["deployed"]);
      expect(result.out).toContain("a change in git not applied yet: source_revision_config.repo_ref");
    } finally {
      await writeFile(join(dir, "support-agent.yaml"), SUPPORT("refs/tags/v1.5.0"));
    }
  });

  it("deployed: drift in staging (a change made live) blocks", async () => {
    const live = await deployment(staging, STAGING_KEY, "support-agent");
    const patched = await fetch(`${staging.url}/v2/deployments/${live.id}`, {
      method: "PATCH",
      headers: { "x-api-key": STAGING_KEY, "content-type": "application/json" },
      body: JSON.stringify({ source_revision_config: { repo_ref: "refs/tags/v1.5.0-hotfix" } }),
    });
    expect(patched.status).toBe(200);
    const result = await promote("--target", "support-agent");
    expect(result.error?.code).toBe("promotion-blocked");
    expect(result.out).toMatch(/✗ deployed fails: drift in source_revision_config\.repo_ref/);
  });

  it("soak: a revision deployed a minute ago (by staging's clock) blocks, alone", async () => {
    // A new version in staging: deployed now, its checks recorded, not soaked.
    const revision = await applyStaging("refs/tags/v1.5.1");
    await recordChecks(revision, 10, 900);
    offset += MINUTE;
    const result = await promote("--target", "support-agent");
    expect(result.error?.code).toBe("promotion-blocked");
    expect(blockedGates(result.out)).toEqual(["soak"]);
    expect(result.out).toMatch(
      /✗ soak fails: deployed (59s|[1-9]m( \d+s)?) ago \(at .*, control plane\); 30m needed/,
    );
  });

  it("checks: none recorded for the revision, then below the thresholds, block alone", async () => {
    offset += 30 * MINUTE;
    const revision = (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
    await recordChecks("an-older-revision", 10, 900);
    let result = await promote("--target", "support-agent");
    expect(blockedGates(result.out)).toEqual(["checks"]);
    expect(result.out).toContain(`no checks recorded for revision ${revision}`);
    await recordChecks(revision, 8, 2500);
    result = await promote("--target", "support-agent");
    expect(result.error?.code).toBe("promotion-blocked");
    expect(blockedGates(result.out)).toEqual(["checks"]);
    expect(result.out).toContain("pass ratio 0.8 < 0.9; p95 2500 ms > 2000 ms");
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(SUPPORT("refs/tags/v1.5.1"));
  });

  it("checks: a record that finished ahead of staging's clock blocks, alone: the clock that wrote it is wrong", async () => {
    // Of the stores' records the latest `at` stands: a pass written a day ahead outranked, for that
    // day, a failure of the same revision recorded later from a right clock.
    const revision = (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
    const ahead = new Date(stagingClock.now() + 24 * 60 * MINUTE).toISOString();
    await recordChecks(revision, 10, 900, ahead);
    // (the control plane's time, read from its Date header in whole seconds, is taken a moment
    // later: 24h, a second more, or under a loaded run seconds less)
    const result = await promote("--target", "support-agent", "--write");
    expect(result.error?.code).toBe("promotion-blocked");
    expect(blockedGates(result.out)).toEqual(["checks"]);
    expect(result.out).toMatch(
      new RegExp(
        `✗ checks fails: the checks of revision ${revision} finished at ${ahead}, (24h( 1s)?|23h 59m \\d+s) ahead of the control plane's time \\(.*\\): the clock that recorded them is wrong`,
      ),
    );
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(SUPPORT("refs/tags/v1.5.1"));
  });

  it("a branch as repo_ref is refused as promotion-unpinned, and blocks the others too", async () => {
    const revision = (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
    await recordChecks(revision, 10, 900);
    const one = await promote("--target", "triage-agent");
    expect(one.error?.code).toBe("promotion-unpinned");
    expect(one.out).toContain('repo_ref "main" is a branch');
    const all = await promote("--write");
    expect(all.error?.code).toBe("promotion-unpinned");
    expect(all.out).toContain("support-agent: ready, not written (another deployment is not)");
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(SUPPORT("refs/tags/v1.5.1"));
  });

  it("once every gate holds: the default prints the diff and writes nothing", async () => {
    const result = await promote("--target", "support-agent");
    expect(result.code).toBe(0);
    expect(result.out).toContain("support-agent: would be promoted");
    expect(result.out).toContain("-      source_revision_config: {repo_ref: refs/tags/v1.4.2}");
    expect(result.out).toContain("+      source_revision_config: {repo_ref: refs/tags/v1.5.1}");
    expect(result.out).toContain("dry run: nothing written");
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(SUPPORT("refs/tags/v1.5.1"));
  });

  it("--branch commits the change on a new branch with the evidence, the working tree untouched", async () => {
    const revision = (await deployment(staging, STAGING_KEY, "support-agent")).latest_revision_id;
    const result = await promote("--target", "support-agent", "--branch", "promote/prod");
    expect(result.code).toBe(0);
    expect(git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
    expect(git("status", "--porcelain").trim()).toBe("");
    const message = git("log", "-1", "--format=%B", "promote/prod");
    expect(message).toContain("plumb: promote staging to prod (support-agent)");
    expect(message).toContain(
      "support-agent source_revision_config.repo_ref: refs/tags/v1.4.2 -> refs/tags/v1.5.1",
    );
    expect(message).toContain(`revision ${revision} (DEPLOYED), deployed at `);
    expect(message).toContain("checks holds: 10/10 passed (ratio 1), p95 900 ms");
    // About 31 min by staging's clock: its 31 min moved, less the real time between the revision's
    // deploy and the first move, plus however long this file has run since (a minute or more on a
    // loaded machine): 30m 59s and 32m were both seen.
    const soaked = /soak holds: deployed (\d+)m( \d+s)? ago/.exec(message);
    expect(Number(soaked?.[1])).toBeGreaterThanOrEqual(30);
    expect(Number(soaked?.[1])).toBeLessThan(45);
    expect(git("show", "promote/prod:support-agent.yaml")).toBe(
      SUPPORT("refs/tags/v1.5.1").replace("{repo_ref: refs/tags/v1.4.2}", "{repo_ref: refs/tags/v1.5.1}"),
    );
    const again = await promote("--target", "support-agent", "--branch", "promote/prod");
    expect(again.error?.code).toBe("promotion-branch-failed");
  });

  it("--write edits the file in place and plan --env prod shows exactly that change", async () => {
    const revisionsBefore = await revisionCount(prod, PROD_KEY, "support-agent");
    const result = await promote("--target", "support-agent", "--write");
    expect(result.code).toBe(0);
    const written = await readFile(join(dir, "support-agent.yaml"), "utf8");
    expect(written).toBe(
      SUPPORT("refs/tags/v1.5.1").replace("{repo_ref: refs/tags/v1.4.2}", "{repo_ref: refs/tags/v1.5.1}"),
    );
    // promote sends nothing to either control plane.
    expect(await revisionCount(prod, PROD_KEY, "support-agent")).toBe(revisionsBefore);
    const plan = await run(planCommand, [dir, "--env", "prod", "--output", "json"]);
    expect(plan.code).toBe(0);
    const parsed = JSON.parse(plan.out) as {
      environments: Array<{
        changes: Array<{
          name: string;
          action: string;
          revision_fields: string[];
          in_place_fields: string[];
        }>;
      }>;
    };
    const changes = parsed.environments[0]!.changes.filter((c) => c.action !== "noop");
    expect(changes).toEqual([
      expect.objectContaining({
        name: "support-agent",
        action: "update",
        revision_fields: ["source_revision_config.repo_ref"],
        in_place_fields: [],
      }),
    ]);
    const text = await run(planCommand, [dir, "--env", "prod"]);
    expect(text.out).toMatch(/repo_ref.*refs\/tags\/v1\.4\.2.*refs\/tags\/v1\.5\.1/);
    // In git now, not running in prod yet: nothing left to write, and it says so (judged on prod).
    const inGit = await promote("--target", "support-agent", "--write");
    expect(inGit.code).toBe(0);
    expect(inGit.out).toContain("support-agent: at that version in git, not running it yet");
    expect(inGit.out).toMatch(
      /! in git; prod runs repo_ref refs\/tags\/v1\.4\.2 \(revision \S+ \(DEPLOYED\)\): plumb apply --env prod/,
    );
    expect(inGit.out).toContain("0 to promote, 0 already at that version, 1 in git not applied yet");
    expect(await revisionCount(prod, PROD_KEY, "support-agent")).toBe(revisionsBefore);
    // Applied to prod (one revision there): now it is already at that version.
    git("commit", "-qam", "promote support-agent to prod");
    expect((await run(applyCommand, [dir, "--env", "prod", "--yes"])).code).toBe(0);
    expect(await revisionCount(prod, PROD_KEY, "support-agent")).toBe(revisionsBefore + 1);
    const again = await promote("--target", "support-agent", "--write");
    expect(again.code).toBe(0);
    expect(again.out).toContain("support-agent: already at that version");
  });

  it("JSON output carries each deployment's outcome, gates and evidence", async () => {
    const result = await promote("--output", "json");
    expect(result.error?.code).toBe("promotion-unpinned");
    const parsed = JSON.parse(result.out) as {
      ok: boolean;
      items: Array<{ name: string; outcome: string; gates: Array<{ gate: string; ok: boolean }> }>;
    };
    expect(parsed.ok).toBe(false);
    expect(parsed.items.map((i) => `${i.name}:${i.outcome}`)).toEqual([
      "support-agent:current",
      "triage-agent:unpinned",
    ]);
  });

  it("--status-branch reads the source's records from the status branch (a fresh clone has none locally)", async () => {
    const published = await run(applyCommand, [
      dir,
      "--env",
      "staging",
      "--yes",
      "--status-branch",
      "plumb-status",
    ]);
    expect(published.code).toBe(0);
    await rm(join(dir, ".plumb", "status", "staging"), { recursive: true, force: true });
    const without = await promote("--target", "support-agent");
    expect(without.out).toMatch(/✗ checks fails: no checks recorded for revision/);
    const withBranch = await promote("--target", "support-agent", "--status-branch", "plumb-status");
    expect(withBranch.out).toContain("✓ checks holds: 10/10 passed");
  });
});
