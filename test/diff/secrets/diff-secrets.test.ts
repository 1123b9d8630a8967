import { describe, expect, it } from "vitest";
import { diffSecrets } from "../../../src/diff/secrets/diff-secrets.js";
import { fingerprintSecrets } from "../../../src/diff/secrets/secret-fingerprint.js";
import { MASKED_SECRET_VALUE } from "../../../src/schema/deployment.js";

// diffSecrets: desired values against the masked live list and the fingerprints last applied.

const masked = (name: string) => ({ name, value: MASKED_SECRET_VALUE });

describe("diffSecrets", () => {
  it("a live secret no longer desired is a change, shown masked, and asks no fingerprint", () => {
    const fingerprints = fingerprintSecrets([{ name: "KEEP", value: "k" }], "salt");
    const out = diffSecrets([{ name: "KEEP", value: "k" }], [masked("OLD"), masked("KEEP")], fingerprints);
    expect(out.live).toEqual([{ name: "KEEP", value: "k" }, masked("OLD")]);
    expect(out.changed).toBe(true);
    expect(out.changedNames).toEqual([]);
    // OLD has no fingerprint, but no desired value to check either: nothing is unknown.
    expect(out.warnings).toEqual([]);
  });

  it("without fingerprints, a desired value is unknown: changed by name, with one warning", () => {
    const out = diffSecrets(
      [
        { name: "B", value: "b" },
        { name: "A", value: "a" },
      ],
      [masked("A"), masked("B")],
      undefined,
    );
    expect(out.changedNames).toEqual(["A", "B"]);
    expect(out.warnings).toEqual([{ field: "secrets", message: "secret values unknown, will be sent" }]);
    expect(out.desired).toEqual([
      { name: "A", value: "a" },
      { name: "B", value: "b" },
    ]);
  });
});
