import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatPlanMarkdown } from "../../src/report/markdown/format-markdown.js";
import { formatPlanText } from "../../src/report/format-text.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { statusFileName } from "../../src/status/status-types.js";
import { appliedDigest } from "../../src/status/checks/checks-record-applied.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type Env, call, gitrepoDoc, startEnv, writeManifests } from "../reconcile/harness.js";
import { runInProcess } from "../support/in-process-cli.js";

// spec.verify's cases against the real local control plane. Its `agent` graph answers "pong" to
// "ping" and echoes anything else, so each case passes or fails by its text alone.

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const record = async (name: string) =>
  (await loadStatusStore(env!.statusDir)).objects.get(`Deployment/${name}`)!;
const threadsOf = async (deploymentId: string) =>
  (await call(env!.cp, "POST", `/agents/${deploymentId}/threads/search`, { limit: 100 }))
    .body as unknown as unknown[];

describe("verify cases after DEPLOYED", () => {
  it("runs every case `repeat` times, streamed, and records the checks for the deployed revision", async () => {
    env = await startEnv({ runSeconds: 0.05 });
    const verify = {
      assistant_id: "agent",
      repeat: 3,
      concurrency: 2,
      timeout_seconds: 10,
      cases: [
        { name: "echo", input: "hello plumb", expect_contains: "hello plumb" },
        { name: "ping", input: { messages: [{ role: "user", content: "ping" }] }, expect_regex: "^pong$" },
        { name: "no-echo", input: "ping", expect_not_contains: "ping" },
      ],
    };
    await writeManifests(env.root, [gitrepoDoc("cases", { verify })]);
    const report = await env.apply();
    const result = report.results[0]!;
    expect(result).toMatchObject({ outcome: "converged", health: "Healthy", revision_status: "DEPLOYED" });
    expect(result.verify).toMatchObject({
      ok: true,
      message: expect.stringMatching(/^9 of 9 runs passed \(1\)/),
    });
    expect(result.verify!.code).toBeUndefined();
    // Each run: its case, total time and time to the first token (the graph takes 50 ms).
    expect(result.verify!.runs).toHaveLength(9);
    for (const run of result.verify!.runs!) {
      expect(run.ok).toBe(true);
      expect(run.total_ms).toBeGreaterThanOrEqual(50);
      expect(run.first_token_ms).toBeGreaterThanOrEqual(0);
    }
    const status = await record("cases");
    expect(status.checks).toEqual({
      revision_id: result.revision_id,
      at: expect.any(String),
      runs: 9,
      passed: 9,
      pass_ratio: 1,
      latency_ms: { p50: expect.any(Number), p95: expect.any(Number), max: expect.any(Number) },
      first_token_ms: { p50: expect.any(Number), p95: expect.any(Number) },
      applied_digest: appliedDigest(status), // the applied state they verified
    });
    expect(status.checks!.revision_id).toBe(status.active_revision_id);
    expect(status.checks!.latency_ms.p95).toBeGreaterThanOrEqual(50);
    // Each run was stateless: the agent server keeps no thread of them.
    expect(await threadsOf(status.id!)).toEqual([]);
  });

  it("fails the apply with verify-failed below min_pass_ratio, and records why, never the answer", async () => {
    env = await startEnv();
    const verify = {
      assistant_id: "agent",
      repeat: 2,
      cases: [
        { name: "ok", input: "ping", expect_not_contains: "refund" },
        { name: "wrong", input: "ping", expect_contains: "refund" },
      ],
    };
    await writeManifests(env.root, [gitrepoDoc("failing", { verify })]);
    const report = await env.apply();
    expect(report.ok).toBe(false);
    const result = report.results[0]!;
    expect(result).toMatchObject({ outcome: "failed", sync: "Synced", health: "Degraded" });
    expect(result.verify).toMatchObject({ ok: false, code: "verify-failed" });
    expect(result.message).toBe(
      "pass ratio 0.5 is below min_pass_ratio 1 (2 of 4 runs passed (0.5), latency p50 " +
        `${result.verify!.checks!.latency_ms.p50} ms, p95 ${result.verify!.checks!.latency_ms.p95} ms, first token p95 ${result.verify!.checks!.first_token_ms!.p95} ms); wrong: the answer does not contain "refund" (2 of 2 runs)`,
    );
    const status = await record("failing");
    expect(status).toMatchObject({ health: "Degraded", last_error: result.message });
    expect(status.checks).toMatchObject({
      revision_id: result.revision_id,
      runs: 4,
      passed: 2,
      pass_ratio: 0.5,
      failures: [{ case: "wrong", reason: 'the answer does not contain "refund" (2 of 2 runs)' }],
    });
    // The answers ("pong", written nowhere in the manifest) stay out of the record.
    const file = await readFile(join(env.statusDir, statusFileName("Deployment", "failing")), "utf8");
    expect(file).toContain('"pass_ratio": 0.5');
    expect(file).not.toContain("pong");

    // Re-run with nothing to change: checked again (the last check failed), same verdict.
    const again = await env.apply();
    expect(again.results[0]).toMatchObject({
      action: "noop",
      outcome: "failed",
      verify: { code: "verify-failed" },
    });

    // The next plan says what apply will check, and what was measured last (text, Markdown, JSON).
    const changed = gitrepoDoc("failing", { verify });
    changed.spec.source_revision_config = { repo_ref: "v2", graph_config_path: "langgraph.json" };
    await writeManifests(env.root, [changed]);
    const { plan } = await env.plan();
    expect(plan.changes[0]!.checks).toEqual({
      runs: 4,
      min_pass_ratio: 1,
      max_latency_p95_ms: null,
      last: {
        revision_id: result.revision_id,
        runs: 4,
        passed: 2,
        pass_ratio: 0.5,
        p95_ms: expect.any(Number),
      },
    });
    const line = `= checks after DEPLOYED: 4 runs, min_pass_ratio 1; last: 2 of 4 passed, p95 ${plan.changes[0]!.checks!.last!.p95_ms} ms on ${result.revision_id}`;
    expect(formatPlanText(plan)).toContain(`    ${line}\n`);
    expect(formatPlanMarkdown(plan)).toContain(line);
  });

  it("passes at or above min_pass_ratio; fails a p95 above max_latency_p95_ms", async () => {
    env = await startEnv({ runSeconds: 0.1 });
    const cases = [
      { name: "ok", input: "ping", expect_contains: "pong" },
      { name: "wrong", input: "ping", expect_contains: "refund" },
    ];
    await writeManifests(env.root, [
      gitrepoDoc("tolerant", { verify: { assistant_id: "agent", min_pass_ratio: 0.5, cases } }),
      gitrepoDoc("slow", {
        verify: { assistant_id: "agent", max_latency_p95_ms: 20, cases: [cases[0]] },
      }),
    ]);
    const report = await env.apply();
    const byName = new Map(report.results.map((r) => [r.name, r]));
    expect(byName.get("tolerant")).toMatchObject({
      outcome: "converged",
      health: "Healthy",
      verify: { ok: true },
    });
    expect((await record("tolerant")).checks).toMatchObject({ runs: 2, passed: 1, pass_ratio: 0.5 });
    expect(byName.get("slow")).toMatchObject({
      outcome: "failed",
      verify: { ok: false, code: "verify-failed" },
    });
    expect(byName.get("slow")!.message).toMatch(/^latency p95 \d+ ms is above max_latency_p95_ms 20 /);
    expect((await record("slow")).checks).toMatchObject({ runs: 1, passed: 1, pass_ratio: 1 });
  });

  it("counts the smoke question as case smoke beside the cases; a run error fails its case", async () => {
    env = await startEnv();
    const verify = {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "ping" }] },
      expect_contains: "pong",
      min_pass_ratio: 0.6,
      cases: [
        { name: "echo", input: "hi", expect_contains: "hi" },
        { name: "boom", input: "raise error" },
      ],
    };
    await writeManifests(env.root, [gitrepoDoc("mixed", { verify })]);
    const report = await env.apply();
    const result = report.results[0]!;
    expect(result).toMatchObject({ outcome: "converged", verify: { ok: true, answer: "pong" } });
    expect(result.verify!.runs!.map((r) => [r.case, r.ok])).toEqual([
      ["smoke", true],
      ["echo", true],
      ["boom", false],
    ]);
    const status = await record("mixed");
    expect(status.checks).toMatchObject({
      runs: 3,
      passed: 2,
      failures: [{ case: "boom", reason: "the run failed: GraphError: the graph raised on request" }],
    });
    // The smoke question kept plumb's own thread; the cases left none.
    expect(status.verify_thread_id).toBe(result.verify!.thread_id);
    expect(await threadsOf(status.id!)).toHaveLength(1);
  });

  it("plumb apply exits 1 and names verify-failed, with the checks in its text and JSON", async () => {
    env = await startEnv();
    const verify = {
      assistant_id: "agent",
      cases: [
        { name: "ok", input: "ping", expect_contains: "pong" },
        { name: "wrong", input: "ping", expect_contains: "refund" },
      ],
    };
    await writeManifests(env.root, [gitrepoDoc("cli", { verify })]);
    const settings = { PLUMB_API_URL: env.cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
    const text = await runInProcess(["apply", env.root, "--yes"], settings);
    expect(text.code).toBe(1);
    expect(text.output).toMatch(/verify failed \(1 of 2 runs passed \(0\.5\), latency p50 \d+ ms/);
    expect(text.output).toContain('wrong: the answer does not contain "refund" [verify-failed]');
    const json = await runInProcess(["apply", env.root, "--yes", "--output", "json"], settings);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.output.slice(json.output.indexOf("{\n"))) as {
      results: Array<{ verify: { code: string; checks: { runs: number; passed: number } } }>;
    };
    expect(report.results[0]!.verify).toMatchObject({
      code: "verify-failed",
      checks: { runs: 2, passed: 1 },
    });
  });

  it("a case run that times out fails as such, and the server cancels it and drops its thread", async () => {
    env = await startEnv({ runSeconds: 30 });
    const verify = { assistant_id: "agent", timeout_seconds: 1, cases: [{ name: "slow", input: "hello" }] };
    await writeManifests(env.root, [gitrepoDoc("slow-case", { verify })]);
    const report = await env.apply();
    const result = report.results[0]!;
    expect(result).toMatchObject({ outcome: "failed", verify: { code: "verify-failed" } });
    expect(result.verify!.runs).toEqual([
      {
        case: "slow",
        ok: false,
        reason: "no answer within 1s",
        total_ms: expect.any(Number),
        first_token_ms: null,
      },
    ]);
    expect(result.verify!.runs![0]!.total_ms).toBeGreaterThanOrEqual(1_000);
    const status = await record("slow-case");
    await expect.poll(() => threadsOf(status.id!)).toEqual([]);
  });

  it("keeps at most `concurrency` case runs in flight", async () => {
    env = await startEnv({ runSeconds: 0.2 });
    const cases = [
      { name: "a", input: "a" },
      { name: "b", input: "b" },
      { name: "c", input: "c" },
    ];
    await writeManifests(env.root, [
      gitrepoDoc("bounded", { verify: { assistant_id: "agent", repeat: 2, concurrency: 2, cases } }),
    ]);
    const at: Record<string, number> = {};
    const report = await env.apply({
      onProgress: (event) => void (at[event.phase] ??= Date.now()),
    });
    expect(report.results[0]!.verify).toMatchObject({ ok: true, checks: { runs: 6, passed: 6 } });
    // Six runs of 200 ms, two at a time: three rounds at least (all at once would take one).
    expect(at.done! - at.verifying!).toBeGreaterThanOrEqual(600);
  });
});
