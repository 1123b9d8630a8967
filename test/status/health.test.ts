import { describe, expect, it } from "vitest";
import { decideHealth, type HealthFacts } from "../../src/status/health.js";

// The health rules (src/status/health.ts), one case per rule and per edge that tells them apart.

const live = (latest: string | null, active: string | null) => ({
  latest_revision_id: latest,
  active_revision_id: active,
});
const previous = (
  health: "Healthy" | "Progressing" | "Degraded" | "Unknown",
  active: string | null = "r1",
) => ({
  health,
  active_revision_id: active,
});

describe("decideHealth", () => {
  it.each<[string, HealthFacts, string]>([
    [
      "live, latest revision active",
      { seen: "live", deployment: live("r1", "r1"), latestStatus: null, previous: undefined },
      "Healthy",
    ],
    [
      "live, active after a failed verify of that revision",
      {
        seen: "live",
        deployment: live("r1", "r1"),
        latestStatus: "DEPLOYED",
        previous: previous("Degraded", "r1"),
      },
      "Degraded",
    ],
    [
      "live, active revision newer than the failed verify",
      {
        seen: "live",
        deployment: live("r2", "r2"),
        latestStatus: "DEPLOYED",
        previous: previous("Degraded", "r1"),
      },
      "Healthy",
    ],
    [
      "live, active, previously Unknown",
      { seen: "live", deployment: live("r1", "r1"), latestStatus: null, previous: previous("Unknown", "r1") },
      "Healthy",
    ],
    [
      "live, latest BUILD_FAILED",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: "BUILD_FAILED", previous: undefined },
      "Degraded",
    ],
    [
      "live, latest CREATE_FAILED",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: "CREATE_FAILED", previous: undefined },
      "Degraded",
    ],
    [
      "live, latest DEPLOY_FAILED",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: "DEPLOY_FAILED", previous: undefined },
      "Degraded",
    ],
    [
      "live, latest INTERRUPTED",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: "INTERRUPTED", previous: undefined },
      "Degraded",
    ],
    [
      "live, latest still building",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: "BUILDING", previous: undefined },
      "Progressing",
    ],
    [
      "live, latest state not read",
      { seen: "live", deployment: live("r2", "r1"), latestStatus: null, previous: previous("Healthy") },
      "Progressing",
    ],
    [
      "live, no revision at all",
      { seen: "live", deployment: live(null, null), latestStatus: null, previous: previous("Healthy") },
      "Unknown",
    ],
    ["gone from the control plane", { seen: "gone" }, "Unknown"],
    ["an object without revisions", { seen: "no-revisions" }, "Healthy"],
    ["apply's starting point", { seen: "planned" }, "Healthy"],
    ["sent, not awaited", { seen: "sent" }, "Progressing"],
    ["wait DEPLOYED", { seen: "wait", end: "DEPLOYED" }, "Healthy"],
    ["wait TIMEOUT", { seen: "wait", end: "TIMEOUT" }, "Progressing"],
    ["wait ABORTED", { seen: "wait", end: "ABORTED" }, "Progressing"],
    ["wait VANISHED", { seen: "wait", end: "VANISHED" }, "Unknown"],
    ["wait BUILD_FAILED", { seen: "wait", end: "BUILD_FAILED" }, "Degraded"],
    ["checks failed", { seen: "checks-failed" }, "Degraded"],
    ["nothing sent, was Healthy", { seen: "nothing-sent", previous: previous("Healthy") }, "Healthy"],
    ["nothing sent, was Degraded", { seen: "nothing-sent", previous: previous("Degraded") }, "Degraded"],
    ["nothing sent, never recorded", { seen: "nothing-sent", previous: undefined }, "Unknown"],
    ["error, was Healthy", { seen: "error", previous: previous("Healthy") }, "Unknown"],
    ["error, was Progressing", { seen: "error", previous: previous("Progressing") }, "Unknown"],
    ["error, was Degraded", { seen: "error", previous: previous("Degraded") }, "Degraded"],
    ["error, never recorded", { seen: "error", previous: undefined }, "Unknown"],
    ["adopted, latest active", { seen: "adopted", deployment: live("r3", "r3") }, "Healthy"],
    ["adopted, latest not active", { seen: "adopted", deployment: live("r3", "r2") }, "Unknown"],
    ["adopted, no revision", { seen: "adopted", deployment: live(null, null) }, "Unknown"],
  ])("%s", (_, facts, expected) => {
    expect(decideHealth(facts)).toBe(expected);
  });
});
