import { createColors } from "picocolors";
import { describe, expect, it } from "vitest";
import { formatDemoLogLine } from "../../src/cli/demo/demo-log.js";

const c = createColors(false);
const at = Date.parse("2026-03-01T12:34:56.000Z");
const line = (entry: Record<string, unknown>) => formatDemoLogLine({ level: 30, time: at, ...entry }, c);

describe("demo log lines", () => {
  it("tells what happened to which object in one sentence", () => {
    expect(
      line({
        msg: "reconciled",
        kind: "Deployment",
        object: "triage-agent",
        id: "dep-1",
        revision: "1d2765d2-c2fe-421f-9007-07da2362c50b",
        reason: "change",
        action: "update",
        result: "applied",
        sync: "Synced",
        health: "Healthy",
        elapsed_ms: 1639,
      }),
    ).toBe("12:34:56 Deployment/triage-agent: update applied → Synced, Healthy, revision 1d2765d2 in 1.6s");
    expect(
      line({ msg: "reconciled", kind: "Deployment", object: "a", reason: "drift", result: "in-sync" }),
    ).toBe("12:34:56 Deployment/a: in sync with its manifest (drift check)");
    // The first check after start (or a save that changes nothing live) is no "change".
    expect(
      line({ msg: "reconciled", kind: "Deployment", object: "a", reason: "change", result: "in-sync" }),
    ).toBe("12:34:56 Deployment/a: in sync with its manifest, nothing to send");
  });

  it("says what a scan found, points at broken files, and hides what the demo already shows", () => {
    expect(line({ msg: "manifests changed", changed: 6, trigger: "start" })).toBe(
      "12:34:56 found 6 objects: checking each once",
    );
    expect(line({ msg: "manifests changed", changed: 1, trigger: "watch" })).toContain(
      "change detected in 1",
    );
    expect(
      line({
        level: 50,
        msg: "invalid manifest: not reconciled until fixed",
        file: "a.yaml",
        line: 11,
        column: 1,
        problem: 'unknown field "spek"',
      }),
    ).toBe('12:34:56 a.yaml:11:1: unknown field "spek"');
    expect(
      line({ msg: "serving the status page at / and /livez /readyz /metrics /status", url: "http://x" }),
    ).toBeNull();
    expect(line({ msg: "something else", kind: "Deployment", object: "a", id: "x", extra: 2 })).toBe(
      "12:34:56 something else Deployment/a extra=2",
    );
  });
});
