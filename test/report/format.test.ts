import { describe, expect, it } from "vitest";
import type { ApplyResult } from "../../src/apply/apply-types.js";
import { formatApplySummary, plainProgress, ttyProgress } from "../../src/report/format-apply.js";
import { formatStatusText } from "../../src/report/format-status.js";
import { sampleStatus } from "../reconcile/fixtures.js";

const result = (name: string, over: Partial<ApplyResult> = {}): ApplyResult => ({
  kind: "Deployment",
  name,
  action: "update",
  id: "id",
  outcome: "converged",
  revision_id: "rev-1",
  revision_status: "DEPLOYED",
  message: null,
  superseded_by: null,
  verify: null,
  sync: "Synced",
  health: "Healthy",
  elapsed_ms: 1500,
  ...over,
});

describe("apply output", () => {
  it("plain progress writes one line per result and summarises failures", () => {
    let out = "";
    const progress = plainProgress({ write: (t: string) => (out += t) });
    progress({ kind: "Deployment", name: "a", phase: "done", result: result("a"), elapsed_ms: 1500 });
    expect(out).toBe("apply: Deployment a converged revision rev-1 DEPLOYED in 1.5s\n");
    const failed = result("b", {
      outcome: "failed",
      revision_status: "BUILD_FAILED",
      message: "revision rev-1 BUILD_FAILED: boom",
    });
    const summary = formatApplySummary(
      {
        format_version: "2",
        ok: false,
        summary: { converged: 1, accepted: 0, skipped: 0, failed: 1, timeout: 0, interrupted: 0 },
        results: [result("a"), failed],
      },
      3000,
    );
    expect(summary).toContain("Apply did not converge: 1 converged, 1 failed in 3.0s.");
    expect(summary).toContain(
      "✗ Deployment b failed revision rev-1 BUILD_FAILED in 1.5s: revision rev-1 BUILD_FAILED: boom",
    );
  });

  it("TTY progress redraws the in-flight lines in place", () => {
    let out = "";
    const tty = ttyProgress({ write: (t: string) => (out += t) }, { now: () => 0 }, { color: false });
    tty.onProgress({ kind: "Deployment", name: "a", phase: "waiting", elapsed_ms: 0 });
    tty.onProgress({
      kind: "Deployment",
      name: "a",
      phase: "waiting",
      revision_status: "BUILDING",
      elapsed_ms: 0,
    });
    expect(out).toContain("a  waiting BUILDING");
    expect(out).toContain("\x1b[2A\x1b[0J"); // moved up over the previous two lines
    tty.onProgress({ kind: "Deployment", name: "a", phase: "done", result: result("a"), elapsed_ms: 0 });
    expect(out).toContain("✓ Deployment a converged");
    expect(out.trimEnd().endsWith("1 done, 0 in progress")).toBe(true);
  });

  it("TTY progress counts the changes the prompt named, and its clock moves between events", () => {
    let out = "";
    let now = 0;
    let redraw: (() => void) | undefined;
    let stopped = false;
    const tty = ttyProgress(
      { write: (t: string) => (out += t) },
      { now: () => now },
      {
        color: false,
        total: 2,
        tick: (fn) => {
          redraw = fn;
          return () => void (stopped = true);
        },
      },
    );
    tty.onProgress({ kind: "Deployment", name: "a", phase: "waiting", elapsed_ms: 0 });
    now = 7_000;
    redraw!(); // no event for 7 s: the line still shows the time going by
    expect(out).toContain("a  waiting  7.0s");
    // An unchanged object is neither printed nor counted; a refused one is printed, not counted.
    tty.onProgress({
      kind: "Deployment",
      name: "same",
      phase: "done",
      result: result("same", { action: "noop" }),
      elapsed_ms: 0,
    });
    tty.onProgress({
      kind: "Deployment",
      name: "no",
      phase: "done",
      result: result("no", { action: "refused", outcome: "skipped" }),
      elapsed_ms: 0,
    });
    tty.onProgress({ kind: "Deployment", name: "a", phase: "done", result: result("a"), elapsed_ms: 0 });
    expect(out).not.toContain("Deployment same");
    expect(out).toContain("Deployment no skipped");
    expect(out.trimEnd().endsWith("1 of 2 changes done, 0 in progress")).toBe(true);
    tty.finish();
    expect(stopped).toBe(true);
  });

  it("the summary counts changes as the prompt did, unchanged objects apart", () => {
    const summary = formatApplySummary(
      {
        format_version: "2",
        ok: true,
        summary: { converged: 3, accepted: 0, skipped: 0, failed: 0, timeout: 0, interrupted: 0 },
        results: [result("a"), result("b", { action: "create" }), result("c", { action: "noop" })],
      },
      1_000,
    );
    expect(summary).toContain("Apply complete: 2 converged, 1 unchanged in 1.0s.");
  });

  it("status text lists sync and health per object", () => {
    const text = formatStatusText([
      sampleStatus("x"),
      sampleStatus("y", { sync: "OutOfSync", health: "Degraded", last_error: "bad" }),
    ]);
    expect(text.split("\n")[0]).toMatch(/^OBJECT\s+SYNC\s+HEALTH/);
    expect(text).toMatch(/Deployment\/y\s+OutOfSync\s+Degraded.*bad/);
  });
});
