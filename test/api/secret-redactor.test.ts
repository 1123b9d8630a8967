import { describe, expect, it } from "vitest";
import { createSecretRedactor, echoForms, REDACTED } from "../../src/api/secret-redactor.js";

const SECRET = 'canary-Zq8"é/+ &x<y>?=;';

describe("createSecretRedactor", () => {
  const redactor = createSecretRedactor([SECRET]);

  it("removes the value as sent, JSON-escaped, URL-encoded and HTML-escaped", () => {
    for (const form of [
      SECRET,
      JSON.stringify(SECRET),
      JSON.stringify(JSON.stringify(SECRET)),
      encodeURIComponent(SECRET),
      new URLSearchParams({ q: SECRET }).toString(),
      SECRET.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
    ]) {
      const text = redactor.redact(`bad: ${form} end`);
      expect(text).toContain(REDACTED);
      expect(text).not.toContain("canary");
      expect(text).not.toContain("Zq8");
      expect(text.endsWith(" end")).toBe(true);
    }
  });

  it("removes it from base64 of a longer text at every alignment, and base64url", () => {
    for (const before of ["", "a", "ab", "abc", 'bad: {"value":"']) {
      const body = `${before}${SECRET} trailing`;
      for (const encoding of ["base64", "base64url"] as const) {
        const encoded = Buffer.from(body).toString(encoding);
        const redacted = redactor.redact(encoded);
        expect(redacted).toContain(REDACTED);
        // What is left decodes to nothing of the value.
        for (const piece of redacted.split(REDACTED))
          expect(Buffer.from(piece, encoding).toString("latin1")).not.toContain("canary");
      }
    }
  });

  it("removes it from a JSON body quoted URL-encoded or in base64, escapes and all", () => {
    const value = 'head"quoted/TAILPART42';
    const tail = createSecretRedactor([value]);
    const body = JSON.stringify({ secrets: [{ name: "S", value }] });
    for (const text of [
      encodeURIComponent(body),
      new URLSearchParams({ body }).toString(),
      Buffer.from(body).toString("base64"),
      JSON.stringify(body),
    ]) {
      const redacted = tail.redact(text);
      expect(redacted).not.toContain("TAILPART");
      expect(Buffer.from(redacted.split(REDACTED).join(""), "base64").toString("latin1")).not.toContain(
        "TAILPART",
      );
    }
  });

  it("removes a value cut to 8 or more characters, keeps a 7-character cut", () => {
    expect(redactor.redact(`bad: ${SECRET.slice(0, 8)}`)).toBe(`bad: ${REDACTED}`);
    expect(redactor.redact(`bad: ${SECRET.slice(0, 12)}...`)).toBe(`bad: ${REDACTED}...`);
    expect(redactor.redact(`bad: ${SECRET.slice(0, 7)}`)).toBe(`bad: ${SECRET.slice(0, 7)}`);
  });

  it("leaves other text alone and redacts every occurrence", () => {
    expect(redactor.redact("nothing secret here")).toBe("nothing secret here");
    expect(redactor.redact(`${SECRET}|${SECRET}`)).toBe(`${REDACTED}|${REDACTED}`);
  });

  it("knows values added later, ignores values shorter than 4 characters", () => {
    const later = createSecretRedactor();
    expect(later.redact("token-12345678")).toBe("token-12345678");
    later.add(["token-12345678", "abc", undefined]);
    expect(later.redact("x token-12345678 abc")).toBe(`x ${REDACTED} abc`);
    later.add(["pw42"]);
    expect(later.redact("a pw42 b")).toBe(`a ${REDACTED} b`);
  });

  it("takes the longest match when values overlap", () => {
    const both = createSecretRedactor(["prefix-secret", "prefix-secret-longer"]);
    expect(both.redact("[prefix-secret-longer]")).toBe(`[${REDACTED}]`);
  });
});

describe("echoForms", () => {
  it("lists each distinct form once", () => {
    const forms = echoForms("plainvalue123");
    expect(new Set(forms).size).toBe(forms.length);
    expect(forms).toContain("plainvalue123");
  });
});
