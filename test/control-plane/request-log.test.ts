import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { gitrepo, start } from "./helpers.js";

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ name: "control-plane", level }, sink) };
}

describe("request log", () => {
  it("writes one line per request with method, URL, status and time; never a key or an upload token", async () => {
    const { lines, logger } = capture("info");
    const api = await start({ logger });
    let token: string | undefined;
    try {
      const created = (await api.call("POST", "/v2/deployments", gitrepo("logged"))).body;
      await api.call("GET", `/v2/deployments/${created.id}?limit=1`);
      await api.call("GET", "/v2/deployments", undefined, { "x-api-key": "wrong-key-123" });
      const source = await api.call("POST", "/v2/deployments", {
        ...gitrepo("src"),
        source: "internal_source",
      });
      expect(source.status).toBe(400); // gitrepo fields on internal_source
      const container = await api.call("POST", "/v2/deployments", {
        name: "up",
        source: "internal_source",
        source_config: {},
        source_revision_config: { graph_config_path: "langgraph.json" },
        secrets: [],
      });
      const { upload_url: uploadUrl } = (
        await api.call("POST", `/v2/deployments/${container.body.id}/upload-url`)
      ).body as { upload_url: string };
      token = uploadUrl.split("/").at(-1);
      const put = await fetch(uploadUrl, { method: "PUT", body: new Uint8Array([0x1f, 0x8b, 0]) });
      expect(put.status).toBe(200);
    } finally {
      await api.cp.stop();
    }
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests.map((l) => `${l.method as string} ${l.status as number}`)).toEqual([
      "POST 201",
      "GET 200",
      "GET 401",
      "POST 400",
      "POST 201",
      "POST 200",
      "PUT 200",
    ]);
    for (const line of requests) expect(typeof line.ms).toBe("number");
    expect(requests[1]?.url).toMatch(/^\/v2\/deployments\/[0-9a-f-]{36}\?limit=1$/);
    expect(requests[6]?.url).toBe("/uploads/[redacted]");
    const text = JSON.stringify(lines);
    expect(text).not.toContain("plumb-local-key");
    expect(text).not.toContain("wrong-key-123");
    expect(text).not.toContain("sk-secret");
    expect(token?.length).toBeGreaterThan(10);
    expect(text).not.toContain(token);
    expect(lines.some((l) => l.msg === "listening")).toBe(true);
  });

  it("logs no request line below info", async () => {
    const { lines, logger } = capture("warn");
    const api = await start({ logger });
    await api.call("GET", "/v2/deployments");
    await api.cp.stop();
    expect(lines).toEqual([]);
  });
});
