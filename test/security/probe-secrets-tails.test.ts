import { describe, expect, it } from "vitest";
import { createSecretRedactor, REDACTED } from "../../src/api/secret-redactor.js";

// A server that shortens what it quotes keeps the end of a value too: pydantic's errors show a long
// input as 'head...tail', a log excerpt as "…tail". The redactor found a value cut at its end only
// (its first 8+ characters), so the tail of a long secret (a JWT, a service key) was shown.

const SECRET = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbHVtYi1wcm9iZSJ9.Zq8sIgnAtUrE-tail0123456789";
const redactor = createSecretRedactor([SECRET]);

describe("a secret cut at its start", () => {
  it("redacts pydantic's 'head...tail' and an excerpt that starts mid-value", () => {
    const pydantic = `1 validation error for Secret\nvalue\n  Input should be a valid integer [type=int_parsing, input_value='${SECRET.slice(0, 24)}...${SECRET.slice(-24)}', input_type=str]`;
    for (const text of [
      pydantic,
      `…${SECRET.slice(30)} (truncated)`,
      JSON.stringify({ tail: SECRET.slice(-12) }),
    ]) {
      const redacted = redactor.redact(text);
      expect(redacted).toContain(REDACTED);
      expect(redacted).not.toContain("Zq8");
      expect(redacted).not.toContain("tail0123");
    }
  });

  it("keeps a live value that only ends as a secret does for fewer than 16 characters", () => {
    expect(redactor.redactWhole(`img:x${SECRET.slice(-12)}`)).toBe(`img:x${SECRET.slice(-12)}`);
    expect(redactor.redactWhole(`img:${SECRET.slice(-20)}`)).toBe(`img:${REDACTED}`);
  });
});
