import { describe, expect, it } from "vitest";
import { buildStatusJson, statusJsonPieces } from "../../../src/controller/http/status-view.js";
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

describe("statusJsonPieces", () => {
  const input = (names: string[]) => ({
    ready: true,
    settled: false,
    source: { kind: "directory", location: '/m "objects":[] here', commit: null },
    statuses: names.map((n) =>
      status(n, { secret_fingerprints: { salt: "s", values: { KEY: "fp" } }, last_error: '"objects":[1]' }),
    ),
    snapshot: snapshotOf([], [problem("b.yaml", 4, "bad")]),
    queue: { pending: 0, running: 1, backingOff: 0 },
  });

  it.each([[[]], [["b"]], [["e", "a", "d", "c", "b"]]])(
    "is the text of the whole JSON, record by record (%j)",
    (names) => {
      const pieces = [...statusJsonPieces(input(names), 2)];
      expect(pieces.join("")).toBe(`${JSON.stringify(buildStatusJson(input(names)))}\n`);
      expect(pieces.join("")).not.toContain("fp");
      expect(pieces).toHaveLength(Math.ceil(names.length / 2) + 1);
    },
  );
});
