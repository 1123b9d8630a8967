import { describe, expect, it } from "vitest";
import { fingerprintSecrets, matchesFingerprint, newSalt } from "../../src/diff/secret-fingerprint.js";

describe("secret fingerprints", () => {
  const secrets = [
    { name: "API_KEY", value: "hunter2" },
    { name: "DB_URL", value: "postgres://x" },
  ];

  it("match the same value and not another, and never contain the value", () => {
    const fp = fingerprintSecrets(secrets);
    expect(matchesFingerprint(fp, "API_KEY", "hunter2")).toBe(true);
    expect(matchesFingerprint(fp, "API_KEY", "hunter3")).toBe(false);
    expect(JSON.stringify(fp)).not.toContain("hunter2");
    expect(fp.values.API_KEY).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+$/);
  });

  it("bind the name: the same value moved to another name does not match", () => {
    const fp = fingerprintSecrets(secrets);
    expect(matchesFingerprint({ ...fp, values: { DB_URL: fp.values.API_KEY! } }, "DB_URL", "hunter2")).toBe(
      false,
    );
  });

  it("are salted per object: one value gives different fingerprints under different salts", () => {
    const a = fingerprintSecrets(secrets, newSalt());
    const b = fingerprintSecrets(secrets, newSalt());
    expect(a.salt).not.toBe(b.salt);
    expect(a.values.API_KEY).not.toBe(b.values.API_KEY);
    expect(fingerprintSecrets(secrets, a.salt)).toEqual(a);
  });

  it("answer unknown for a name not recorded or a malformed record", () => {
    const fp = fingerprintSecrets(secrets);
    expect(matchesFingerprint(fp, "OTHER", "x")).toBeUndefined();
    expect(
      matchesFingerprint({ salt: fp.salt, values: { API_KEY: "md5$abc" } }, "API_KEY", "hunter2"),
    ).toBeUndefined();
  });

  it("are modest in cost: 200 fingerprints in well under a second", () => {
    const started = performance.now();
    fingerprintSecrets(Array.from({ length: 200 }, (_, i) => ({ name: `S${i}`, value: `v${i}` })));
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
