import { describe, expect, it } from "vitest";
import { signBody, verifySignature } from "../../src/controller/webhook.js";

const body = Buffer.from('{"ref":"refs/heads/main"}');

describe("webhook signatures", () => {
  it("accepts the GitHub-style signature of the exact body", () => {
    // Known vector: HMAC-SHA256("It's a Secret to Everybody", "Hello, World!") from GitHub's docs.
    expect(signBody("It's a Secret to Everybody", "Hello, World!")).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
    expect(verifySignature("s3cret", body, signBody("s3cret", body))).toBe(true);
    expect(
      verifySignature("s3cret", body, signBody("s3cret", body).toUpperCase().replace("SHA256", "sha256")),
    ).toBe(true);
  });

  it("rejects a wrong secret, a changed body, a missing or malformed header", () => {
    expect(verifySignature("s3cret", body, signBody("other", body))).toBe(false);
    expect(verifySignature("s3cret", Buffer.from("{}"), signBody("s3cret", body))).toBe(false);
    expect(verifySignature("s3cret", body, undefined)).toBe(false);
    expect(verifySignature("s3cret", body, "sha1=abc")).toBe(false);
    expect(verifySignature("s3cret", body, `sha256=${"0".repeat(63)}`)).toBe(false);
  });
});
