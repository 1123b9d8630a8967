import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildLogStream, chooseLogFormat } from "../../src/cli/controller/log-stream.js";
import { createLogger } from "../../src/logger.js";

const sink = (isTTY: boolean) => {
  let text = "";
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => text };
};

describe("controller log format", () => {
  it("is readable on a terminal and JSON elsewhere, unless PLUMB_LOG_FORMAT says", () => {
    expect(chooseLogFormat({ stdout: { isTTY: true }, env: {} })).toBe("pretty");
    expect(chooseLogFormat({ stdout: { isTTY: false }, env: {} })).toBe("json");
    expect(chooseLogFormat({ stdout: { isTTY: true }, env: { PLUMB_LOG_FORMAT: "json" } })).toBe("json");
    expect(chooseLogFormat({ stdout: { isTTY: false }, env: { PLUMB_LOG_FORMAT: "Pretty" } })).toBe("pretty");
    expect(() => chooseLogFormat({ stdout: { isTTY: false }, env: { PLUMB_LOG_FORMAT: "xml" } })).toThrow(
      /json or pretty/,
    );
  });

  it("writes one readable line per entry on a terminal: time, level, message, the object and its fields", () => {
    const out = sink(true);
    const stream = buildLogStream({ stdout: out.stream, env: { NO_COLOR: "1" } });
    expect(stream).toBeDefined();
    const log = createLogger({ name: "plumb-controller" }, stream);
    log.warn({ kind: "Deployment", object: "triage", fields: ["description"] }, "drift detected");
    const line = out.text().trim();
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: drift detected/);
    expect(line).toContain('"object":"triage"');
    expect(line).toContain("description");
    expect(line).not.toContain('"level"');
    expect(line.split("\n")).toHaveLength(1);
    expect(line).not.toContain("\u001b["); // NO_COLOR
  });

  it("keeps JSON lines (and pino's redaction) when stdout is not a terminal", () => {
    expect(buildLogStream({ stdout: sink(false).stream, env: {} })).toBeUndefined();
    const out = sink(true);
    const log = createLogger({}, buildLogStream({ stdout: out.stream, env: { NO_COLOR: "1" } }));
    log.info({ apiKey: "plumb-secret-key" }, "connected");
    expect(out.text()).not.toContain("plumb-secret-key");
  });
});
