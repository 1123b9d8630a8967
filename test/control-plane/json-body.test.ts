import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repeatedKeyOf } from "../../src/control-plane/http/json/json-scan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type Api, container, start } from "./helpers.js";

// How a JSON body is read (docs/control-plane.md "Validation and errors"; decisions.md "Patch
// semantics": malformed JSON is a 422). Bytes that are not UTF-8 were decoded to U+FFFD and stored
// in names and values; a key given twice kept the last value, which a proxy or log in front may read
// as the first. Both are now 422 json_invalid, nothing stored.

let api: Api;
let id = "";
beforeAll(async () => {
  api = await start({ mode: "self-hosted" });
  id = (await api.call("POST", "/v2/deployments", container("body"))).body.id as string;
});
afterAll(async () => api.cp.stop());

/** Sends raw bytes as the body (helpers.ts sends strings). */
async function send(method: string, path: string, bytes: Uint8Array) {
  const response = await fetch(`${api.cp.url}${path}`, {
    method,
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: bytes,
  });
  return { status: response.status, body: (await response.json()) as { detail: unknown } };
}
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

describe("bytes that are not UTF-8", () => {
  it.each([
    [
      "a lone continuation byte in a secret name",
      bytes('{"secrets": [{"name": "A', [0x80], '", "value": "x"}]}'),
    ],
    ["an overlong encoding of '/'", bytes('{"secrets": [{"name": "A', [0xc0, 0xaf], '", "value": "x"}]}')],
    [
      "a truncated sequence at the end of a value",
      bytes('{"secrets": [{"name": "A", "value": "', [0xe2, 0x82], '"}]}'),
    ],
    ["an encoded surrogate", bytes('{"secrets": [{"name": "A", "value": "', [0xed, 0xa0, 0x80], '"}]}')],
  ])("%s: 422 json_invalid, nothing stored", async (_name, body) => {
    const before = await api.call("GET", `/v2/deployments/${id}`);
    const answer = await send("PATCH", `/v2/deployments/${id}`, body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      { loc: ["body"], msg: "JSON decode error: the body is not valid UTF-8", type: "json_invalid" },
    ]);
    expect((await api.call("GET", `/v2/deployments/${id}`)).body).toEqual(before.body);
  });

  it("valid UTF-8, a byte-order mark included, is read", async () => {
    const answer = await send(
      "PATCH",
      `/v2/deployments/${id}`,
      bytes([0xef, 0xbb, 0xbf], '{"source_config": {"custom_url": "https://ünïcode.example/€"}}'),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ source_config: { custom_url: "https://ünïcode.example/€" } });
  });
});

describe("a key given twice in one object", () => {
  it.each([
    ["at the top", '{"secrets": [], "secrets": null}', "secrets"],
    ["nested", '{"source_config": {"custom_url": "https://a", "custom_url": "https://b"}}', "custom_url"],
    ["spelled with an escape", '{"secrets": [], "secr\\u0065ts": null}', "secrets"],
  ])("%s: 422 naming the key, nothing stored", async (_name, body, key) => {
    const before = await api.call("GET", `/v2/deployments/${id}`);
    const answer = await api.call("PATCH", `/v2/deployments/${id}`, body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      {
        loc: ["body"],
        msg: `JSON decode error: the key "${key}" appears twice in one object`,
        type: "json_invalid",
      },
    ]);
    expect((await api.call("GET", `/v2/deployments/${id}`)).body).toEqual(before.body);
  });

  it("the same key in sibling objects, in arrays and as a value is fine", () => {
    expect(
      repeatedKeyOf('{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}], "d": "a"}'),
    ).toBeUndefined();
    expect(repeatedKeyOf('{"a": "{\\"a\\": 1, \\"a\\": 2}", "b": ["a", "a"]}')).toBeUndefined();
    expect(repeatedKeyOf('[{"a": 1, "a": 2}]')).toBe("a");
    expect(repeatedKeyOf('{"o": {"k": [], "k": {}}}')).toBe("k");
    expect(repeatedKeyOf("{}")).toBeUndefined();
  });
});
