import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unsafeIntegerIssues } from "../../src/control-plane/http/json/big-integers.js";
import { type Api, container, start } from "./helpers.js";

// An integer beyond 2^53 - 1 in a JSON body: JSON.parse changed it (9007199254740993 was stored and
// answered as 9007199254740992, 12345678901234567890 as 12345678901234567000); a pydantic service
// keeps it exactly. Now 422 naming each field, as the integer query parameters already answer
// (docs/control-plane.md "Integers beyond 2^53").

let api: Api;
let id = "";
let thread = "";
beforeAll(async () => {
  api = await start({ mode: "self-hosted" });
  id = (await api.call("POST", "/v2/deployments", container("big"))).body.id as string;
  thread = (await api.call("POST", `/agents/${id}/threads`, {})).body.thread_id as string;
});
afterAll(async () => api.cp.stop());

const over = (loc: Array<string | number>) => ({
  loc,
  msg: "Input should be less than or equal to 9007199254740991",
  type: "less_than_equal",
});

describe("an integer a double cannot hold", () => {
  it("is a 422 naming the field of a deployment, nothing stored", async () => {
    const before = (await api.call("GET", `/v2/deployments/${id}`)).body;
    const body =
      '{"source_config": {"resource_spec": {"memory_mb": 9007199254740993, "db_storage_gi": -9007199254740993}}}';
    const answer = await api.call("PATCH", `/v2/deployments/${id}`, body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      over(["body", "source_config", "resource_spec", "memory_mb"]),
      {
        loc: ["body", "source_config", "resource_spec", "db_storage_gi"],
        msg: "Input should be greater than or equal to -9007199254740991",
        type: "greater_than_equal",
      },
    ]);
    const after = (await api.call("GET", `/v2/deployments/${id}`)).body;
    expect(after.latest_revision_id).toBe(before.latest_revision_id);
  });

  it("is a 422 on the agent server too, in free-form metadata at any depth", async () => {
    const body = '{"metadata": {"n": 12345678901234567890, "list": [1, {"deep": -90071992547409930}]}}';
    const answer = await api.call("POST", `/agents/${id}/threads`, body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      over(["body", "metadata", "n"]),
      expect.objectContaining({ loc: ["body", "metadata", "list", 1, "deep"], type: "greater_than_equal" }),
    ]);
    const patched = await api.call(
      "PATCH",
      `/agents/${id}/threads/${thread}`,
      '{"metadata": {"n": 9007199254740992}}',
    );
    expect(patched.status).toBe(422);
    expect(patched.body.detail).toEqual([over(["body", "metadata", "n"])]);
  });

  it("keeps every integer up to 2^53 - 1 exactly, and floats, digits in strings and query bounds as before", async () => {
    const body =
      '{"metadata": {"max": 9007199254740991, "min": -9007199254740991, "float": 1e20, "f": 9007199254740993.0, "s": "\\"12345678901234567890"}}';
    const answer = await fetch(`${api.cp.url}/agents/${id}/threads`, {
      method: "POST",
      headers: { "x-api-key": "plumb-local-key", "content-type": "application/json" },
      body,
    });
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(text).toContain('"max":9007199254740991,"min":-9007199254740991,"float":100000000000000000000');
    expect(text).toContain('"s":"\\"12345678901234567890"');
    const query = await api.call("GET", "/v2/deployments?offset=9007199254740993");
    expect(query.body.detail).toEqual([over(["query", "offset"])]);
  });
});

describe("unsafeIntegerIssues", () => {
  it("finds integer literals outside strings only, each where the parsed value holds it", () => {
    expect(unsafeIntegerIssues('{"a": "9007199254740993", "b": 9007199254740991}')).toEqual([]);
    expect(unsafeIntegerIssues('{"a\\"": "\\"", "9007199254740993": [9007199254740993]}')).toEqual([
      over(["body", "9007199254740993", 0]),
    ]);
    // an object's integer-like keys come first in a parsed value: the locs are still right
    expect(unsafeIntegerIssues('{"b": 90071992547409930, "1": 2, "0": 90071992547409930}')).toEqual([
      over(["body", "0"]),
      over(["body", "b"]),
    ]);
    expect(unsafeIntegerIssues("[1.5e300, 12345678901234567.5, 12345678901234567890]")).toEqual([
      over(["body", 2]),
    ]);
  });
});
