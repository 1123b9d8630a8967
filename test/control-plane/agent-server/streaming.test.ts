import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SYSTEM_ASSISTANT_ID,
  uuid5,
} from "../../../src/control-plane/agent-server/assistants/assistant-store.js";
import { splitIntoChunks } from "../../../src/control-plane/agent-server/streaming/stream-events.js";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../src/control-plane/server.js";
import { createAgentDeployment, gatedClock } from "./test-context.js";

// What the SDK suite (test/conformance) does not see: the wire format, keep-alives, shutdown with
// open streams, the temporary threads of stateless runs, and the refusals.
const clock = gatedClock();
let cp: RunningControlPlane;
let base: string;
const headers = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };

const createDeployment = (server: RunningControlPlane, name: string) =>
  createAgentDeployment(server.url, name);

const post = (path: string, body: unknown, extra: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
const get = (path: string, extra: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { headers: { ...headers, ...extra } });
const runBody = (content: string, extra: Record<string, unknown> = {}) => ({
  assistant_id: "agent",
  input: { messages: [{ role: "user", content }] },
  ...extra,
});

/** Reads an SSE body until `until` is seen in the text (or the body ends). */
async function readUntil(response: Response, until: string): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(until)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text;
}

beforeAll(async () => {
  cp = await startControlPlane({
    clock,
    runSeconds: 5,
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    streamHeartbeatSeconds: 0.02,
  });
  base = `${cp.url}/agents/${await createDeployment(cp, "streams")}`;
});
afterAll(async () => cp?.stop());

describe("event streams on the wire", () => {
  it("sends text/event-stream with id lines, keep-alive comments while the run works, and end", async () => {
    const thread = (await (await post("/threads", {})).json()) as { thread_id: string };
    const response = await post(`/threads/${thread.thread_id}/runs/stream`, runBody("ping"));
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("content-location")).toMatch(
      new RegExp(`^/threads/${thread.thread_id}/runs/`),
    );
    expect(response.headers.get("location")).toMatch(/\/stream$/);
    const reader = readUntil(response, "event: end");
    await expect.poll(() => clock.waiting()).toBe(1);
    const early = await readUntil(
      await get(`${response.headers.get("content-location")}/stream`),
      ": heartbeat",
    );
    expect(early).toContain(": heartbeat");
    clock.release();
    const text = await reader;
    expect(text.startsWith("event: metadata\ndata: {")).toBe(true);
    expect(text).toMatch(/event: values\ndata: \{"messages":\[.*"pong".*\]\}\nid: \d+\n\n/);
    expect(text).toMatch(/event: end\ndata: null\nid: \d+\n\n$/);
  });

  it("refuses unknown stream modes and join parameters with 422, unknown runs with 404", async () => {
    const thread = (await (await post("/threads", {})).json()) as { thread_id: string };
    const bad = await post(
      `/threads/${thread.thread_id}/runs/stream`,
      runBody("x", { stream_mode: ["values", "bogus"] }),
    );
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('"stream_mode",1');
    const unknownRun = "00000000-0000-4000-8000-00000000beef";
    expect((await get(`/threads/${thread.thread_id}/runs/${unknownRun}/stream`)).status).toBe(404);
    expect((await get(`/runs/${unknownRun}/stream`)).status).toBe(404);
    const badJoin = await get(
      `/threads/${thread.thread_id}/runs/${unknownRun}/stream?cancel_on_disconnect=maybe`,
    );
    expect(badJoin.status).toBe(422);
  });

  it("a join with cancel_on_disconnect=1 cancels the run when the client leaves; =0 does not", async () => {
    const thread = (await (await post("/threads", {})).json()) as { thread_id: string };
    const run = (await (await post(`/threads/${thread.thread_id}/runs`, runBody("ping"))).json()) as {
      run_id: string;
    };
    await expect.poll(() => clock.waiting()).toBe(1);
    const runPath = `/threads/${thread.thread_id}/runs/${run.run_id}`;
    const status = async () => ((await (await get(runPath)).json()) as { status: string }).status;
    for (const cancel of ["0", "1"]) {
      const leaving = new AbortController();
      const joined = await fetch(`${base}${runPath}/stream?cancel_on_disconnect=${cancel}`, {
        headers,
        signal: leaving.signal,
      });
      expect(await readUntil(joined, "event: metadata")).toContain(run.run_id);
      leaving.abort();
      if (cancel === "0") {
        await expect(readUntil(await get(`${runPath}/stream`), "event: metadata")).resolves.toContain(
          "metadata",
        );
        expect(await status()).toBe("running");
      }
    }
    await expect.poll(status).toBe("interrupted");
    expect(clock.waiting()).toBe(0);
  });

  it("another deployment cannot join a stateless run's stream", async () => {
    const other = `${cp.url}/agents/${await createDeployment(cp, "other-streams")}`;
    const waited = post("/runs/wait", runBody("ping", { on_completion: "keep" }));
    await expect.poll(() => clock.waiting()).toBe(1);
    clock.release();
    const response = await waited;
    const runPath = response.headers.get("content-location")!;
    expect(runPath).toMatch(/^\/runs\//);
    expect((await get(`${runPath}/stream`)).status).toBe(200);
    expect((await fetch(`${other}${runPath}/stream`, { headers })).status).toBe(404);
  });

  it("a stateless run's thread is deleted when it ends, unless on_completion is keep", async () => {
    const listThreads = async () =>
      (await (await post("/threads/search", { limit: 1000 })).json()) as unknown[];
    const before = (await listThreads()).length;
    for (const onCompletion of ["delete", "keep"]) {
      const waited = post("/runs/wait", runBody("ping", { on_completion: onCompletion }));
      await expect.poll(() => clock.waiting()).toBe(1);
      clock.release();
      expect(await (await waited).json()).toMatchObject({
        messages: [{ content: "ping" }, { content: "pong" }],
      });
    }
    expect((await listThreads()).length).toBe(before + 1);
  });

  it("a batch is checked whole before any run starts", async () => {
    const refused = await post("/runs/batch", [runBody("a"), { input: {} }]);
    expect(refused.status).toBe(422);
    expect(JSON.stringify(await refused.json())).toContain('"body",1,"assistant_id"');
    expect(clock.waiting()).toBe(0);
    const accepted = await post("/runs/batch", [runBody("a"), runBody("b")]);
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as unknown[]).length).toBe(2);
    await expect.poll(() => clock.waiting()).toBe(2);
    clock.release();
  });

  it("stopping the server ends open streams instead of waiting for them", async () => {
    const server = await startControlPlane({
      clock: gatedClock(),
      runSeconds: 5,
      revisionSeconds: 0,
      deploymentReadySeconds: 0,
    });
    const id = await createDeployment(server, "closing");
    const response = await fetch(`${server.url}/agents/${id}/runs/stream`, {
      method: "POST",
      headers,
      body: JSON.stringify(runBody("ping")),
    });
    const text = readUntil(response, "never sent");
    await server.stop();
    expect(await text).toContain("event: metadata");
  });
});

describe("assistants", () => {
  it("derives the graph's assistant id as the open-source server does (uuid5)", () => {
    expect(uuid5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
    expect(SYSTEM_ASSISTANT_ID).toBe("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
  });

  it("refuses to change or delete the system assistant, an unknown graph and a malformed body", async () => {
    expect((await fetch(`${base}/assistants/agent`, { method: "DELETE", headers })).status).toBe(409);
    const patch = await fetch(`${base}/assistants/${SYSTEM_ASSISTANT_ID}`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ name: "x" }),
    });
    expect(patch.status).toBe(409);
    expect((await post("/assistants", { graph_id: "other" })).status).toBe(404);
    const malformed = await post("/assistants", { graph_id: "agent", assistant_id: "nope", config: [] });
    expect(malformed.status).toBe(422);
    expect(JSON.stringify(await malformed.json())).toMatch(/assistant_id.*config|config.*assistant_id/);
    const fixedId = "11111111-2222-4333-8444-555555555555";
    expect((await post("/assistants", { graph_id: "agent", assistant_id: fixedId })).status).toBe(200);
    expect((await post("/assistants", { graph_id: "agent", assistant_id: fixedId })).status).toBe(409);
    const reused = await post("/assistants", {
      graph_id: "agent",
      assistant_id: fixedId,
      if_exists: "do_nothing",
    });
    expect(reused.status).toBe(200);
    const search = await post("/assistants/search", { limit: 1 });
    expect(search.headers.get("x-pagination-total")).toBe("2");
    expect(((await search.json()) as unknown[]).length).toBe(1);
  });

  it("keeps created assistants across a restart with --data", async () => {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-assistants-"));
    try {
      const options = { dataDir, revisionSeconds: 0, deploymentReadySeconds: 0 };
      const first = await startControlPlane(options);
      const id = await createDeployment(first, "kept");
      const created = await fetch(`${first.url}/agents/${id}/assistants`, {
        method: "POST",
        headers,
        body: JSON.stringify({ graph_id: "agent", name: "kept" }),
      });
      const { assistant_id } = (await created.json()) as { assistant_id: string };
      await first.stop();
      const second = await startControlPlane(options);
      const again = await fetch(`${second.url}/agents/${id}/assistants/${assistant_id}`, { headers });
      expect(await again.json()).toMatchObject({ assistant_id, name: "kept" });
      await second.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("answer chunks", () => {
  it("splits an answer into word-sized chunks that join back to it", () => {
    for (const text of ["pong", "two words", "  spaced  out  ", "", "line\nbreak"]) {
      expect(splitIntoChunks(text).join("")).toBe(text);
    }
    expect(splitIntoChunks("a b c")).toHaveLength(3);
  });
});
