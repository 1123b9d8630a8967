import { describe, expect, it } from "vitest";
import { buildStatusJson } from "../../../src/controller/http/status-view.js";
import { loaded, problem, snapshotOf, status } from "../fixtures.js";

describe("buildStatusJson", () => {
  it("sorts objects by name and lists problems by file without internal fields", () => {
    const json = buildStatusJson({
      ready: true,
      settled: true,
      source: { kind: "git", location: "https://git.example.com/m.git", commit: "abc" },
      statuses: [status("zeta"), status("alpha"), status("mid")],
      snapshot: snapshotOf([loaded("a.yaml", "alpha")], [problem("b.yaml", 4, "bad field")]),
      queue: { pending: 1, running: 2, backingOff: 0 },
    });
    expect(json.objects.map((o) => o.name)).toEqual(["alpha", "mid", "zeta"]);
    expect(json.invalid).toEqual([
      { file: "b.yaml", problems: [{ line: 4, column: 3, code: "unknown-field", message: "bad field" }] },
    ]);
    expect(json).toMatchObject({ ready: true, source: { commit: "abc" }, queue: { running: 2 } });
  });
});
