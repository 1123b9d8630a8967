import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, container, start } from "../helpers.js";

// The agent server reads a uuid in a body (thread_id, assistant_id, a search's ids), in its path
// (thread, run, checkpoint) and where an id may be a uuid (a run's assistant_id, a checkpoint_id) in
// every spelling the control plane's body uuids take, and answers the canonical form
// (docs/control-plane.md "Ids"). It took only the hyphenated form: 32 hex digits, braces and
// urn:uuid: were 422, or 404 for an assistant or a thread asked so.

let api: Api;
let agents = "";
beforeAll(async () => {
  api = await start({ mode: "self-hosted", runSeconds: 0 });
  agents = `/agents/${(await api.call("POST", "/v2/deployments", container("ids"))).body.id as string}`;
});
afterAll(async () => api.cp.stop());

/** Every spelling of one uuid: hyphenated upper case, 32 hex digits, braces, urn:uuid:. */
const spellings = (canonical: string) => [
  canonical.toUpperCase(),
  canonical.replaceAll("-", ""),
  `{${canonical.toUpperCase()}}`,
  `urn:uuid:${canonical}`,
];

describe("an agent-server id in any spelling of a uuid", () => {
  it("creates a thread under the canonical id, and finds it by every spelling", async () => {
    const id = "5d1f0f9e-0c8b-4f1a-a1f2-c3d4e5f60718";
    const [upper = "", hex = "", braces = "", urn = ""] = spellings(id);
    const created = await api.call("POST", `${agents}/threads`, { thread_id: hex });
    expect(created.status).toBe(200);
    expect(created.body.thread_id).toBe(id);
    const again = await api.call("POST", `${agents}/threads`, { thread_id: braces });
    expect(again.status).toBe(409); // the same thread
    const reused = await api.call("POST", `${agents}/threads`, { thread_id: urn, if_exists: "do_nothing" });
    expect(reused.body.thread_id).toBe(id);
    for (const spelling of [upper, hex, braces])
      expect(
        (await api.call("GET", `${agents}/threads/${encodeURIComponent(spelling)}`)).body.thread_id,
      ).toBe(id);
    const found = await api.call("POST", `${agents}/threads/search`, {
      ids: [hex, "{00000000-0000-4000-8000-000000000000}"],
    });
    expect(found.status).toBe(200);
    expect(found.body.map((t: { thread_id: string }) => t.thread_id)).toEqual([id]);
  });

  it("creates an assistant under the canonical id, and runs it by another spelling", async () => {
    const id = "11111111-2222-4333-8444-555555555555";
    const [upper = "", hex = "", braces = "", urn = ""] = spellings(id);
    const created = await api.call("POST", `${agents}/assistants`, { graph_id: "agent", assistant_id: urn });
    expect(created.status).toBe(200);
    expect(created.body.assistant_id).toBe(id);
    expect((await api.call("GET", `${agents}/assistants/${hex}`)).body.assistant_id).toBe(id);
    const thread = (await api.call("POST", `${agents}/threads`, {})).body.thread_id as string;
    const run = await api.call("POST", `${agents}/threads/${thread}/runs`, {
      assistant_id: braces,
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect(run.status).toBe(200);
    expect(run.body.assistant_id).toBe(id);
    const runId = run.body.run_id as string;
    const byPath = await api.call(
      "GET",
      `${agents}/threads/${thread.toUpperCase()}/runs/${runId.replaceAll("-", "")}`,
    );
    expect(byPath.body.run_id).toBe(runId);
    await api.call("GET", `${agents}/threads/${thread}/runs/${runId}/join`);
    const checkpoint = (await api.call("GET", `${agents}/threads/${thread}/state`)).body.checkpoint
      .checkpoint_id as string;
    const atCheckpoint = await api.call(
      "GET",
      `${agents}/threads/${thread}/state/${checkpoint.toUpperCase()}`,
    );
    expect(atCheckpoint.status).toBe(200);
    expect(atCheckpoint.body.checkpoint.checkpoint_id).toBe(checkpoint);
    const cron = await api.call("POST", `${agents}/runs/crons`, {
      assistant_id: upper,
      schedule: "0 0 * * *",
    });
    expect(cron.body.assistant_id).toBe(id);
  });

  it("refuses anything else as a uuid, naming the field", async () => {
    for (const bad of [
      "5d1f0f9e-0c8b4f1a-a1f2-c3d4e5f60718",
      "5d1f0f9e0c8b4f1aa1f2c3d4e5f6071",
      "{5d1f0f9e0c8b4f1aa1f2c3d4e5f60718}",
      7,
    ]) {
      const answer = await api.call("POST", `${agents}/threads`, { thread_id: bad });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toEqual([
        { loc: ["body", "thread_id"], msg: "Input should be a valid UUID", type: "uuid_parsing" },
      ]);
    }
    const assistant = await api.call("POST", `${agents}/assistants`, {
      graph_id: "agent",
      assistant_id: "urn:uuid:x",
    });
    expect(assistant.body.detail[0]).toMatchObject({ loc: ["body", "assistant_id"], type: "uuid_parsing" });
  });
});
