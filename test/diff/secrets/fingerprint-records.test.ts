import { createHmac, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  fingerprintSecrets,
  fingerprintSecretsAsync,
  matchesFingerprint,
} from "../../../src/diff/secrets/secret-fingerprint.js";
import { createDerivations } from "../../../src/diff/secrets/scrypt-derivations.js";

// The recorded forms, read as a status record holds them (maybe forged, maybe from another
// version): which parameters are trusted, and that only a whole, well-formed record is read.
// The records are built here with node:crypto, so the format itself is pinned: records already
// committed to status branches must keep verifying.

const NAME = "TOKEN";
const VALUE = "v4lue";
const SALT = "object-salt";

/** A `scrypt$N$r$p$<salt>$<key>` record of NAME=VALUE, derived here. */
function scryptRecord(N: number, r: number, p: number, keyLength = 32): string {
  const key = scryptSync(`${NAME}\0${VALUE}`, SALT, keyLength, { N, r, p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${N}$${r}$${p}$${SALT}$${key.toString("base64url")}`;
}

const hmacRecord = () =>
  `hmac-sha256$${createHmac("sha256", SALT).update(`${NAME}\0${VALUE}`).digest("base64url")}`;

const check = (record: string, value = VALUE) =>
  matchesFingerprint({ salt: SALT, values: { [NAME]: record } }, NAME, value);

describe("recorded scrypt parameters", () => {
  it("are trusted up to their bounds, each bound included", () => {
    for (const [N, r, p] of [
      [2, 1, 1],
      [2, 16, 1],
      [2, 1, 3],
      [2, 1, 4],
      [1 << 15, 1, 1],
      [1 << 16, 2, 1],
    ] as const) {
      expect(check(scryptRecord(N, r, p)), `N=${N} r=${r} p=${p}`).toBe(true);
      expect(check(scryptRecord(N, r, p), "other"), `N=${N} r=${r} p=${p}`).toBe(false);
    }
  });

  it("past a bound, not a power of two, or refused by scrypt (N ≥ 2^(16·r)): not read (unknown, never derived)", () => {
    const key = "A".repeat(43);
    for (const params of [
      "1$1$1",
      "3$1$1",
      `${1 << 17}$2$1`,
      `${1 << 16}$1$1`,
      "2$0$1",
      "2$17$1",
      "2$1$0",
      "2$1$5",
    ])
      expect(check(`scrypt$${params}$${SALT}$${key}`), params).toBeUndefined();
  });
});

describe("a record is read whole or not at all", () => {
  it("a key of another length is unknown (never compared)", () => {
    expect(check(scryptRecord(2, 1, 1, 16))).toBeUndefined();
    expect(check(scryptRecord(2, 1, 1, 64))).toBeUndefined();
  });

  it("anything before or after a well-formed record makes it unreadable", () => {
    for (const record of [scryptRecord(2, 1, 1), hmacRecord()]) {
      expect(check(record)).toBe(true);
      expect(check(`x${record}`)).toBeUndefined();
      expect(check(`${record}!`)).toBeUndefined();
      expect(check(`${record}\n`)).toBeUndefined();
    }
  });
});

describe("an empty secret list", () => {
  it("has no list fingerprint, and costs no scrypt", async () => {
    expect(fingerprintSecrets([], SALT)).toEqual({ salt: SALT, values: {} });
    const derivations = createDerivations();
    expect(await fingerprintSecretsAsync([], SALT, undefined, derivations)).toEqual({
      salt: SALT,
      values: {},
    });
    expect(derivations.count).toBe(0);
  });
});
