import { describe, expect, it } from "vitest";
import { createSecretRedactor } from "../../src/api/secret-redactor.js";
import { credentialIn } from "../../src/import/credentials.js";

// What import never writes to git (docs/import.md "Safety"): the field is named, never the value.

const redact = (text: string) => createSecretRedactor(["the-api-key-1234"]).redact(text);
const spec = (sourceConfig: Record<string, unknown>) => ({
  kind: "Deployment",
  spec: { source_config: sourceConfig },
});

describe("credentialIn", () => {
  it("names a URL's user or password and the run's own secrets, in values and keys", () => {
    expect(credentialIn(spec({ repo_url: "https://x-access-token:ghp_abc@github.com/o/r" }), redact)).toBe(
      "spec.source_config.repo_url carries credentials (user:password@host)",
    );
    expect(credentialIn(spec({ custom_url: "https://user@agent.example" }), redact)).toContain("custom_url");
    expect(credentialIn(spec({ labels: { owner: "x the-api-key-1234" } }), redact)).toBe(
      "spec.source_config.labels.owner holds one of plumb's own credentials (its API key or a token)",
    );
    expect(credentialIn(spec({ labels: { "the-api-key-1234": "x" } }), redact)).toContain("a key of");
  });

  it("names a token a live URL carries elsewhere: its query, its path, a known token shape", () => {
    const token = "T0123456789abcdefghij";
    expect(credentialIn(spec({ repo_url: `https://github.com/o/r?access_token=${token}` }), redact)).toBe(
      "spec.source_config.repo_url carries credentials (query parameter access_token)",
    );
    const pathToken = credentialIn(
      spec({ repo_url: `https://github.com/x-access-token/${token}/o/r` }),
      redact,
    );
    expect(pathToken).toContain("path segment after x-access-token");
    const shaped = credentialIn(spec({ custom_url: `https://agent.example/ghp_${token}` }), redact);
    expect(shaped).toContain("a ghp_ token");
    for (const found of [pathToken, shaped]) expect(found).not.toContain(token);
  });

  it("leaves URLs without credentials, an '@' after the host, and plain text alone", () => {
    for (const value of [
      "https://github.com/o/r",
      "https://host.example/path/@scope/pkg",
      "https://host.example?q=a@b",
      "ghcr.io/o/img@sha256:abc",
      "mailto:a@b.example",
    ])
      expect(credentialIn(spec({ repo_url: value }), redact)).toBeUndefined();
  });

  it("is linear on hostile text: 2 MB of letters, of '://' and of '://a' end at once", () => {
    // A regular expression with the scheme before '://' backtracked quadratically: 2 MB of letters never ended.
    for (const value of ["a".repeat(2_000_000), "://".repeat(700_000), "://a".repeat(500_000)]) {
      const started = performance.now();
      expect(credentialIn(spec({ image_uri: value }), (t) => t)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });
});
