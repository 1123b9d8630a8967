import { afterEach, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../../src/clock.js";
import { loadStatusStore } from "../../../src/status/status-store.js";
import { type Env, call, gitrepoDoc, startEnv, writeManifests } from "../../reconcile/harness.js";

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  env = undefined;
});

const verify = (expect_contains: string) => ({
  assistant_id: "agent",
  input: { messages: [{ role: "user", content: "ping" }] },
  expect_contains,
  timeout_seconds: 10,
});

describe("verify after DEPLOYED", () => {
  it("passes on an answer, reuses its thread, and rolls back a stuck earlier run", async () => {
    // Runs started while `holding` stay in flight until stopped, however long the next apply takes
    // (with runs of 0.4 s, a loaded machine's apply outlasted the "stuck" run: nothing to roll back).
    let holding = false;
    const clock: Clock = {
      now: systemClock.now,
      sleep: (ms, signal) =>
        holding
          ? new Promise((_, reject) =>
              signal?.addEventListener("abort", () => reject(signal.reason as Error), { once: true }),
            )
          : systemClock.sleep(ms, signal),
    };
    env = await startEnv({ runSeconds: 0.4, clock });
    await writeManifests(env.root, [gitrepoDoc("vee", { verify: verify("pong") })]);
    const first = await env.apply();
    expect(first.results[0]).toMatchObject({ outcome: "converged", health: "Healthy" });
    // Streamed: the answer and when the first event and the first token came.
    expect(first.results[0]!.verify).toMatchObject({
      ok: true,
      answer: "pong",
      message: expect.stringMatching(/^answered \(first event \d+ ms, first token \d+ ms\)$/),
    });
    const { first_event_ms: firstEvent, first_token_ms: firstToken } = first.results[0]!.verify!;
    expect(firstEvent).toBeGreaterThanOrEqual(0);
    expect(firstToken).toBeGreaterThanOrEqual(firstEvent!); // the answer comes after the run's time
    expect(first.results[0]!.verify!.run_id).toMatch(/^[0-9a-f-]{36}$/);
    const status = (await loadStatusStore(env.statusDir)).objects.get("Deployment/vee")!;
    const threadId = status.verify_thread_id!;
    expect(threadId).toBe(first.results[0]!.verify!.thread_id);

    // An earlier run still in progress on plumb's thread must not block the new check.
    const agent = `/agents/${status.id}`;
    holding = true;
    const stuck = await call(env.cp, "POST", `${agent}/threads/${threadId}/runs`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "earlier check" }] },
    });
    expect(stuck.status).toBe(200);
    const stuckRun = `${agent}/threads/${threadId}/runs/${stuck.body!.run_id}`;
    expect((await call(env.cp, "GET", stuckRun)).body).toMatchObject({ status: "running" });
    holding = false;
    const changed = gitrepoDoc("vee", { verify: verify("pong") });
    changed.spec.source_revision_config = { repo_ref: "next", graph_config_path: "langgraph.json" };
    await writeManifests(env.root, [changed]);
    const second = await env.apply();
    expect(second.results[0]!.verify).toMatchObject({ ok: true, thread_id: threadId });
    // rollback: the earlier run was deleted and its messages are gone from the state.
    const old = await call(env.cp, "GET", stuckRun);
    expect(old.status).toBe(404);
    const state = await call(env.cp, "GET", `${agent}/threads/${threadId}/state`);
    const texts = (state.body!.values.messages as Array<{ content: string }>).map((m) => m.content);
    expect(texts).not.toContain("earlier check");
    expect(texts).toContain("pong");
  });

  it("reports a run that fails with the stream's error event", async () => {
    env = await startEnv();
    const failing = verify("pong");
    failing.input.messages[0]!.content = "raise error";
    await writeManifests(env.root, [gitrepoDoc("failing", { verify: failing })]);
    const report = await env.apply();
    expect(report.results[0]).toMatchObject({ outcome: "failed", health: "Degraded" });
    expect(report.results[0]!.message).toBe("the run failed: GraphError: the graph raised on request");
  });

  it("a check that times out disconnects, and the server cancels its run", async () => {
    env = await startEnv({ runSeconds: 30 });
    const slow = { ...verify("pong"), timeout_seconds: 1 };
    await writeManifests(env.root, [gitrepoDoc("slow", { verify: slow })]);
    const report = await env.apply();
    expect(report.results[0]!.message).toBe("no answer within 1s");
    const status = (await loadStatusStore(env.statusDir)).objects.get("Deployment/slow")!;
    const { cp } = env;
    const runsPath = `/agents/${status.id}/threads/${status.verify_thread_id}/runs`;
    await expect
      .poll(async () => (await call(cp, "GET", runsPath)).body)
      .toMatchObject([{ status: "interrupted" }]);
  });

  it("fails apply and marks the deployment Degraded when the answer does not match", async () => {
    env = await startEnv();
    await writeManifests(env.root, [gitrepoDoc("wrong", { verify: verify("definitely-not-in-the-answer") })]);
    const report = await env.apply();
    expect(report.ok).toBe(false);
    expect(report.results[0]).toMatchObject({
      outcome: "failed",
      sync: "Synced",
      health: "Degraded",
      revision_status: "DEPLOYED",
    });
    expect(report.results[0]!.message).toContain("does not contain");
    const status = (await loadStatusStore(env.statusDir)).objects.get("Deployment/wrong")!;
    expect(status.health).toBe("Degraded");
    expect(status.last_error).toContain("does not contain");

    // Re-running with nothing to change re-checks (the last check failed) and still fails.
    const again = await env.apply();
    expect(again.results[0]).toMatchObject({ action: "noop", outcome: "failed", health: "Degraded" });
  });
});
