import { describe, expect, it } from "vitest";
import {
  checkFingerprints,
  fingerprintSecrets,
  fingerprintSecretsAsync,
  matchesFingerprint,
  matchesFingerprintAsync,
  newSalt,
} from "../../src/diff/secret-fingerprint.js";

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

  it("cost N=2^10, r=8 now, and records written at the earlier N=2^9 still verify", () => {
    expect(fingerprintSecrets(secrets).values.API_KEY).toMatch(/^scrypt\$1024\$8\$1\$/);
    // A record written by the previous version (N=512), kept as it was stored.
    const old = {
      salt: "old-record-salt",
      values: { API_KEY: "scrypt$512$8$1$lrTjdtLQ6poPiHPPPFFFtjAgCG51wuKf_jredkRcVnU" },
    };
    expect(matchesFingerprint(old, "API_KEY", "hunter2")).toBe(true);
    expect(matchesFingerprint(old, "API_KEY", "hunter3")).toBe(false);
  });

  it("refuse recorded parameters that are not a sane scrypt cost", () => {
    const fp = fingerprintSecrets(secrets, "s");
    const key = fp.values.API_KEY!.split("$")[4];
    for (const params of ["1000$8$1", `${1 << 20}$8$1`, "1024$64$1", "1024$8$0"])
      expect(
        matchesFingerprint(
          { salt: "s", values: { API_KEY: `scrypt$${params}$${key}` } },
          "API_KEY",
          "hunter2",
        ),
      ).toBeUndefined();
  });

  it("async versions agree with the synchronous ones", async () => {
    const salt = newSalt();
    const fp = await fingerprintSecretsAsync(secrets, salt);
    expect(fp).toEqual(fingerprintSecrets(secrets, salt));
    expect(await matchesFingerprintAsync(fp, "API_KEY", "hunter2")).toBe(true);
    expect(await matchesFingerprintAsync(fp, "API_KEY", "nope")).toBe(false);
    expect(await matchesFingerprintAsync(fp, "OTHER", "x")).toBeUndefined();
  });

  it("checkFingerprints answers ahead of time for exactly the checked values, and never serialises them", async () => {
    const fp = fingerprintSecrets(secrets);
    let inFlight = 0;
    let most = 0;
    const limit = async <T>(task: () => Promise<T>) => {
      most = Math.max(most, ++inFlight);
      try {
        return await task();
      } finally {
        inFlight -= 1;
      }
    };
    const checked = await checkFingerprints(fp, [...secrets, { name: "NEW", value: "n" }], limit);
    expect(most).toBeGreaterThan(0);
    // Spoil the recorded values: answers for the checked values come from the check, others are recomputed.
    const spoiled = { ...checked, values: { API_KEY: "md5$x", DB_URL: "md5$x" } };
    expect(matchesFingerprint(spoiled, "API_KEY", "hunter2")).toBe(true);
    expect(matchesFingerprint(spoiled, "NEW", "n")).toBeUndefined();
    expect(matchesFingerprint(spoiled, "API_KEY", "hunter3")).toBeUndefined();
    expect(JSON.stringify(checked)).not.toContain("hunter2");
  });

  it("are modest in cost: 100 fingerprints in well under a second", () => {
    const started = performance.now();
    fingerprintSecrets(Array.from({ length: 100 }, (_, i) => ({ name: `S${i}`, value: `v${i}` })));
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
