import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../../src/control-plane/options.js";
import { startControlPlane } from "../../../src/control-plane/server.js";
import { gatedClock } from "./test-context.js";

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "plumb-agent-restart-"));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

describe("agent server across a restart with --data", () => {
  it("resumes a run that was in progress when the server stopped", async () => {
    const options = { dataDir, runSeconds: 5, revisionSeconds: 0, deploymentReadySeconds: 0 };
    const before = await startControlPlane({ ...options, clock: gatedClock() });
    const created = await fetch(`${before.url}/v2/deployments`, {
      method: "POST",
      headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        name: "restart-run",
        source: "gitrepo",
        source_config: {
          integration_id: DEFAULT_INTEGRATION_ID,
          repo_url: "https://git.example.com/acme/agent",
          deployment_type: "dev",
        },
        source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
        secrets: [],
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const sdk = (url: string) =>
      new Client({
        apiUrl: `${url}/agents/${id}`,
        apiKey: DEFAULT_API_KEY,
        callerOptions: { maxRetries: 0 },
      });
    const thread = await sdk(before.url).threads.create();
    const run = await sdk(before.url).runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "ping" }] },
    });
    await before.stop(); // the run never got its clock tick

    const clock = gatedClock();
    const after = await startControlPlane({ ...options, clock });
    try {
      const client = sdk(after.url);
      expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("running");
      expect(clock.waiting()).toBe(1);
      const joined = client.runs.join(thread.thread_id, run.run_id);
      clock.release();
      const values = (await joined) as { messages: Array<{ type: string; content: string }> };
      expect(values.messages.map((m) => `${m.type}:${m.content}`)).toEqual(["human:ping", "ai:pong"]);
    } finally {
      await after.stop();
    }
  });
});
