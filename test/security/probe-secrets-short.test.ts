import { describe, expect, it } from "vitest";
import { createSecretRedactor, REDACTED } from "../../src/api/secret-redactor.js";
import { parseDetail } from "../../src/api/transport/error-detail.js";

// The redactor's limits and the cases that held when probed (docs/security.md, "Redaction").

describe("values shorter than 4 characters: a documented limit", () => {
  // A deployment's `secrets` also carry plain settings (examples/saas: SEARCH_RESULTS_LIMIT: "8"):
  // removing "8" or "on" from every server message would leave nothing to read, and warning on
  // each such setting would be noise. So they are not searched for, and no warning is given.
  it("leaves 1- to 3-character values in server text, removes a 4-character one in any case", () => {
    for (const value of ["8", "on", "abc", "a.c"]) {
      expect(createSecretRedactor([value]).redact(`limit ${value} reached`)).toBe(`limit ${value} reached`);
    }
    const four = createSecretRedactor(["x9Q!"]);
    expect(four.redact("key x9Q! refused")).toBe(`key ${REDACTED} refused`);
    expect(four.redact("key X9Q! refused")).toBe(`key ${REDACTED} refused`);
  });
});

describe("what held up", () => {
  it("treats regular-expression characters as text", () => {
    const value = ".*+?^${}()|[]\\/";
    const redactor = createSecretRedactor([value]);
    expect(redactor.redact(`bad ${value} end`)).toBe(`bad ${REDACTED} end`);
    expect(redactor.redact("bad anything end")).toBe("bad anything end");
  });

  it("redacts a value that is part of another, and one value given by two secrets", () => {
    const short = "inner-Zq8-part";
    const long = `outer-${short}-tail`;
    const redactor = createSecretRedactor([short, long, short]);
    expect(redactor.redact(`a ${long} b ${short} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it("redacts a value with a line break, sent as is or JSON-escaped", () => {
    const value = "first-line\nsecond-Zq8";
    const redactor = createSecretRedactor([value]);
    for (const echo of [value, JSON.stringify(value), JSON.stringify(JSON.stringify(value))])
      expect(redactor.redact(`x ${echo} y`)).not.toContain("Zq8");
  });

  it("redacts an echo in a JSON key: a detail object, a 422 issue's loc", () => {
    const value = "key-as-name-Zq8";
    const scrub = (text: string) => createSecretRedactor([value]).redact(text);
    const asObject = parseDetail(JSON.stringify({ detail: { [value]: "unknown field" } }), scrub);
    const asLoc = parseDetail(
      JSON.stringify({ detail: [{ loc: ["body", value], msg: "extra", type: "x", input: value }] }),
      scrub,
    );
    expect(JSON.stringify([asObject, asLoc])).not.toContain("Zq8");
  });
});
