import { randomBytes, scryptSync, timingSafeEqual } from "node:crypto";

// Secret values cannot be read back from the control plane (they come back as ********), so apply
// records a salted, slow fingerprint of each value it sent and plan compares the desired values
// against it. The fingerprints may be committed to a status branch: scrypt with a per-object salt
// makes guessing low-entropy values expensive, at a modest cost (~0.5 ms: N=2^9, r=8) so 1,000 deployments
// still plan fast. The parameters travel inside each fingerprint, so the cost can change later.

export type SecretFingerprints = {
  /** Per-object random salt (base64url). */
  salt: string;
  /** Secret name → fingerprint, e.g. "scrypt$1024$8$1$<base64url>". */
  values: Record<string, string>;
};

type ScryptParams = { N: number; r: number; p: number };
const DEFAULT_PARAMS: ScryptParams = { N: 512, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** A fresh random salt for one object's fingerprints. */
export function newSalt(): string {
  return randomBytes(16).toString("base64url");
}

function derive(name: string, value: string, salt: string, params: ScryptParams): Buffer {
  // The name is bound in, so moving a value to another name counts as a change.
  return scryptSync(`${name}\0${value}`, salt, KEY_LENGTH, { ...params, maxmem: 256 * params.N * params.r });
}

/** Fingerprint of one secret value. */
export function fingerprintSecret(name: string, value: string, salt: string): string {
  const { N, r, p } = DEFAULT_PARAMS;
  return `scrypt$${N}$${r}$${p}$${derive(name, value, salt, DEFAULT_PARAMS).toString("base64url")}`;
}

/** Fingerprints of a whole secret list under one salt (a new random salt when omitted). */
export function fingerprintSecrets(
  secrets: readonly { name: string; value: string }[],
  salt: string = newSalt(),
): SecretFingerprints {
  const values: Record<string, string> = {};
  for (const secret of secrets) values[secret.name] = fingerprintSecret(secret.name, secret.value, salt);
  return { salt, values };
}

/**
 * True when `value` is the value recorded for `name`; false when it differs, and undefined when
 * nothing (or nothing readable) is recorded for that name.
 */
export function matchesFingerprint(
  fingerprints: SecretFingerprints,
  name: string,
  value: string,
): boolean | undefined {
  const recorded = fingerprints.values[name];
  const match = recorded === undefined ? null : /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]+)$/.exec(recorded);
  if (!match) return undefined;
  const params = { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  const expected = Buffer.from(match[4] ?? "", "base64url");
  if (expected.length !== KEY_LENGTH || params.N > 1 << 16 || params.r > 16 || params.p > 4) return undefined;
  return timingSafeEqual(derive(name, value, fingerprints.salt, params), expected);
}
