import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../src/control-plane/server.js";
import { createAgentDeployment, gatedClock } from "./test-context.js";

// The real control plane over real HTTP, driven by the official SDK. Runs last until the test
// releases the clock, so "the first run is still in progress" holds without any sleep.
const clock = gatedClock();
let cp: RunningControlPlane;
let deploymentId: string;

const createDeployment = (name: string) => createAgentDeployment(cp.url, name);

const client = (apiKey = DEFAULT_API_KEY, id = deploymentId) =>
  new Client({ apiUrl: `${cp.url}/agents/${id}`, apiKey, callerOptions: { maxRetries: 0 } });
const texts = (values: unknown) =>
  (values as { messages: Array<{ type: string; content: unknown }> }).messages.map(
    (m) => `${m.type}:${String(m.content)}`,
  );

beforeAll(async () => {
  cp = await startControlPlane({
    clock,
    runSeconds: 5,
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    apiKeys: [
      { key: DEFAULT_API_KEY, tenants: ["acme"] },
      { key: "other-key", tenants: ["globex"] },
    ],
  });
  deploymentId = await createDeployment("sdk-agent");
});
afterAll(async () => cp?.stop());

describe("agent server with @langchain/langgraph-sdk", () => {
  it("rollback: the earlier run is deleted and only the new run's messages remain", async () => {
    const sdk = client();
    const thread = await sdk.threads.create();
    const first = await sdk.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "first" }] },
    });
    expect(clock.waiting()).toBe(1); // the first run is in progress
    const second = await sdk.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "ping" }] },
      multitaskStrategy: "rollback",
    });
    expect(second.multitask_strategy).toBe("rollback");
    const joined = sdk.runs.join(thread.thread_id, second.run_id);
    clock.release();
    expect(texts(await joined)).toEqual(["human:ping", "ai:pong"]);
    await expect(sdk.runs.get(thread.thread_id, first.run_id)).rejects.toMatchObject({ status: 404 });
    expect((await sdk.runs.get(thread.thread_id, second.run_id)).status).toBe("success");
    const state = await sdk.threads.getState(thread.thread_id);
    expect(texts(state.values)).toEqual(["human:ping", "ai:pong"]);
  });

  it("runs.wait throws when the run fails (the server answers __error__)", async () => {
    const sdk = client();
    const thread = await sdk.threads.create();
    const waited = sdk.runs
      .wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "raise error" }] } })
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    await expect.poll(() => clock.waiting()).toBe(1);
    clock.release();
    const outcome = await waited;
    expect(outcome).toHaveProperty("error");
    expect(String((outcome as { error: unknown }).error)).toContain("the graph raised on request");
  });

  it("interrupt keeps the earlier run, reject answers 409, enqueue waits its turn", async () => {
    const sdk = client();
    const thread = await sdk.threads.create({ metadata: { purpose: "strategies" } });
    expect(thread.metadata).toMatchObject({ purpose: "strategies" });
    const say = (content: string, multitaskStrategy?: "reject" | "interrupt" | "enqueue") =>
      sdk.runs.create(thread.thread_id, "agent", {
        input: { messages: [{ role: "human", content }] },
        multitaskStrategy,
      });
    const first = await say("one");
    await expect(say("nope", "reject")).rejects.toMatchObject({ status: 409 });
    const second = await say("two", "interrupt");
    expect((await sdk.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
    const third = await say("three"); // enqueue by default
    expect(third.multitask_strategy).toBe("enqueue");
    expect((await sdk.runs.get(thread.thread_id, third.run_id)).status).toBe("pending");
    clock.release(); // ends the second run; the third starts and waits on the clock
    await sdk.runs.join(thread.thread_id, second.run_id);
    await expect.poll(() => clock.waiting()).toBe(1);
    clock.release();
    const values = await sdk.runs.join(thread.thread_id, third.run_id);
    expect(texts(values)).toEqual(["human:one", "human:two", "ai:two", "human:three", "ai:three"]);
    const runs = await sdk.runs.list(thread.thread_id);
    expect(runs.map((run) => run.status)).toEqual(["success", "success", "interrupted"]);
  });

  it("answers 404 for an unknown assistant, and for another tenant's deployment", async () => {
    const thread = await client().threads.create();
    await expect(
      client().runs.create(thread.thread_id, "other-graph", { input: null }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(client("other-key").threads.create()).rejects.toMatchObject({ status: 404 });
    const unauthenticated = await fetch(`${cp.url}/agents/${deploymentId}/threads`, { method: "POST" });
    expect(unauthenticated.status).toBe(401);
  });
});
