import { describe, expect, it } from "vitest";
import { echoAnswer, parseFaultSpec } from "../../src/control-plane/http/faults.js";

// The echo fault quotes a refused body as a careless server would, in every form, taking turns
// between a 400 detail, a 422 issue list with FastAPI's `input`, and a plain-text 400.

const body = { name: "a", secrets: [{ name: "S", value: 'v4lue"/ +long-enough' }] };
const raw = JSON.stringify(body);

describe("the echo fault", () => {
  it("is parsed like the other faults", () => {
    expect(parseFaultSpec("echo=1,500=0")).toEqual({
      rates: [
        { kind: "echo", share: 1 },
        { kind: "500", share: 0 },
      ],
    });
  });

  it("quotes the body as received, JSON-escaped, URL-encoded, base64 and cut, in three styles", () => {
    const [first, second, third] = [0, 1, 2].map((n) => echoAnswer(body, n));
    expect(first).toMatchObject({ status: 400, contentType: "application/json" });
    const detail = (JSON.parse(first!.payload) as { detail: string }).detail;
    for (const form of [
      raw,
      JSON.stringify(raw),
      encodeURIComponent(raw),
      Buffer.from(raw).toString("base64"),
      'cut: a S v4lue"/ +l',
    ])
      expect(detail).toContain(form);
    expect(second).toMatchObject({ status: 422, contentType: "application/json" });
    const issue = (JSON.parse(second!.payload) as { detail: Array<Record<string, unknown>> }).detail[0];
    expect(issue).toMatchObject({ loc: ["body", raw], msg: detail, type: "value_error", input: body });
    expect(third).toEqual({ status: 400, contentType: "text/plain", payload: `Bad Request\n${detail}` });
  });
});
