import { describe, expect, it } from "vitest";
import { formatApplyHint } from "../../src/cli/sync/apply-hint.js";

// plan --out FILE closes with the apply command for that plan: it must name the same status store
// and control plane as the plan, or apply reads another store (a status branch left out: the
// secrets' fingerprints are not found and the plan is stale).

describe("the apply hint after plan --out", () => {
  it("repeats the status branch, the store and the connection flags the plan was given", () => {
    expect(
      formatApplyHint("deployments", "plan.json", {
        statusBranch: "plumb-status",
        apiUrl: "https://api.example.com",
        tenantId: "t-1",
      }),
    ).toBe(
      "plumb apply deployments --plan plan.json --api-url https://api.example.com --tenant-id t-1 --status-branch plumb-status",
    );
    expect(formatApplyHint(".", "p.json", { statusDir: "state", mode: "self-hosted" })).toBe(
      "plumb apply . --plan p.json --mode self-hosted --status-dir state",
    );
  });

  it("asks again for the plan's deletions and quotes what the shell would split", () => {
    expect(formatApplyHint("my deployments", "it's.json", { prune: true, replace: ["a", "b"] })).toBe(
      "plumb apply 'my deployments' --plan 'it'\\''s.json' --prune --replace a --replace b",
    );
    expect(formatApplyHint("deploy", "plan.json", {})).toBe("plumb apply deploy --plan plan.json");
  });
});
