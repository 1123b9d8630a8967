import { createHmac, timingSafeEqual } from "node:crypto";
import {
  type Derivations,
  FINGERPRINT_PARAMS,
  KEY_LENGTH,
  type Limit,
  newSalt,
  processDerivations,
  saltOfSource,
  type ScryptParams,
} from "./scrypt-derivations.js";
import { sortByName } from "../values.js";

export { newSalt } from "./scrypt-derivations.js";

// Secret values cannot be read back from the control plane (they come back as ********), so apply
// records a fingerprint of each value it sent and plan compares the desired values against it. The
// fingerprints may be committed to a status branch (docs/status.md "What secret fingerprints
// protect"). Three forms, each telling how to check it, so records of every age still verify:
//
// - `scrypt$N$r$p$<salt>$<key>`: a value from the environment or a file. Slow (N=2^10, r=8), under
//   a salt shared by the records one process writes for that source (saltOfSource), so plan derives
//   a value that 1,000 deployments share once, not 1,000 times (scrypt-derivations.ts memoises).
// - `hmac-sha256$<key>`: a literal `value:`, already in git as plain text: a slow hash of it would
//   protect nothing the repository does not already show, so it is HMAC-SHA256 under the object's salt.
// - `scrypt$N$r$p$<key>`: under the object's salt (records written before, saved plans: no origins
//   given), with `set`, the whole list's fingerprint, checked first.

export type SecretFingerprints = {
  /** Per-object random salt (base64url). */
  salt: string;
  /** Secret name → fingerprint in one of the forms above. */
  values: Record<string, string>;
  /**
   * Fingerprint of the whole list (every name and value) under the object's salt, in records whose
   * values are all under that salt: plan checks it first (one scrypt per unchanged object).
   */
  set?: string;
};

/**
 * Fingerprints whose desired values were already checked (asynchronously, see checkFingerprints):
 * matchesFingerprint answers from `checked` for exactly those values. A Map, so JSON never shows it.
 */
export type CheckedFingerprints = SecretFingerprints & {
  checked?: ReadonlyMap<string, { value: string; match: boolean | undefined }>;
};

/** Where a secret's value comes from: a literal in git, or a source (`env\0NAME`, `file\0PATH`). */
export type SecretOrigin = { literal: true } | { source: string };

type Secret = { name: string; value: string };

/** Recorded parameters beyond these are not trusted (a forged record could ask for gigabytes). */
const MAX_PARAMS: ScryptParams = { N: 1 << 16, r: 16, p: 4 };

// The name is bound in, so moving a value to another name counts as a change.
const input = (name: string, value: string) => `${name}\0${value}`;
// The whole list, in name order. It starts with \0, which no secret name can (C identifiers), so it
// never equals the input of a single value.
const SET_NAME = "\0set";
const setValue = (secrets: readonly Secret[]) =>
  JSON.stringify(sortByName(secrets).map((s) => [s.name, s.value]));
const hmac = (name: string, value: string, salt: string) =>
  createHmac("sha256", salt).update(input(name, value)).digest();

const format = (params: ScryptParams, key: Buffer, salt?: string) =>
  `scrypt$${params.N}$${params.r}$${params.p}$${salt === undefined ? "" : `${salt}$`}${key.toString("base64url")}`;

/** Fingerprints of a whole secret list under one salt (a new random salt when omitted). */
export function fingerprintSecrets(secrets: readonly Secret[], salt: string = newSalt()): SecretFingerprints {
  const slow = (name: string, value: string) =>
    format(FINGERPRINT_PARAMS, processDerivations.deriveSync(input(name, value), salt, FINGERPRINT_PARAMS));
  const values: Record<string, string> = {};
  for (const secret of secrets) values[secret.name] = slow(secret.name, secret.value);
  if (secrets.length === 0) return { salt, values };
  return { salt, values, set: slow(SET_NAME, setValue(secrets)) };
}

/**
 * fingerprintSecrets off the main thread (apply records many at once). With `origins` (what apply
 * and adopt know from the manifest), literals get `hmac-sha256` and sourced values a shared salt;
 * a name without an origin, or no `origins` at all, the object's salt (and `set`) as before.
 */
export async function fingerprintSecretsAsync(
  secrets: readonly Secret[],
  salt: string = newSalt(),
  origins?: ReadonlyMap<string, SecretOrigin>,
  derivations: Derivations = processDerivations,
): Promise<SecretFingerprints> {
  // An empty list costs nothing: no scrypt (a body with `secrets: []` is common).
  if (secrets.length === 0) return { salt, values: {} };
  const one = async ({ name, value }: Secret): Promise<string> => {
    const origin = origins?.get(name);
    if (origin && "literal" in origin) return `hmac-sha256$${hmac(name, value, salt).toString("base64url")}`;
    const shared = origin ? saltOfSource(origin.source) : undefined;
    const key = await derivations.derive(input(name, value), shared ?? salt, FINGERPRINT_PARAMS);
    return format(FINGERPRINT_PARAMS, key, shared);
  };
  const values: Record<string, string> = {};
  const fingerprints = await Promise.all(secrets.map(one));
  secrets.forEach((secret, i) => (values[secret.name] = fingerprints[i]!));
  if (origins) return { salt, values };
  const set = await derivations.derive(input(SET_NAME, setValue(secrets)), salt, FINGERPRINT_PARAMS);
  return { salt, values, set: format(FINGERPRINT_PARAMS, set) };
}

type Recorded =
  | { kind: "scrypt"; params: ScryptParams; salt: string | undefined; expected: Buffer }
  | { kind: "hmac"; expected: Buffer };

/** Parameters scrypt accepts (N a power of two, N < 2^(16·r), so r ≥ 1) within MAX_PARAMS. */
const trustedParams = ({ N, r, p }: ScryptParams) =>
  N >= 2 &&
  (N & (N - 1)) === 0 &&
  N <= MAX_PARAMS.N &&
  N < 2 ** (16 * r) &&
  r <= MAX_PARAMS.r &&
  p >= 1 &&
  p <= MAX_PARAMS.p;

/** What a recorded fingerprint says and how to check it; undefined when unreadable or not trusted. */
function parseRecorded(recorded: string | undefined): Recorded | undefined {
  // Stryker disable next-line ConditionalExpression: equivalent, "undefined" is neither form below
  if (recorded === undefined) return undefined;
  const fast = /^hmac-sha256\$([\w-]+)$/.exec(recorded);
  if (fast) {
    const expected = Buffer.from(fast[1]!, "base64url");
    return expected.length === KEY_LENGTH ? { kind: "hmac", expected } : undefined;
  }
  const match = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$(?:([\w-]+)\$)?([\w-]+)$/.exec(recorded);
  if (!match) return undefined;
  const params = { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  const expected = Buffer.from(match[5]!, "base64url");
  if (expected.length !== KEY_LENGTH || !trustedParams(params)) return undefined;
  return { kind: "scrypt", params, salt: match[4], expected };
}

/**
 * True when `value` is the value recorded for `name`; false when it differs, and undefined when
 * nothing (or nothing readable) is recorded for that name.
 */
export function matchesFingerprint(
  fingerprints: CheckedFingerprints,
  name: string,
  value: string,
): boolean | undefined {
  const checked = fingerprints.checked?.get(name);
  if (checked && checked.value === value) return checked.match;
  const recorded = parseRecorded(fingerprints.values[name]);
  if (!recorded) return undefined;
  const key =
    recorded.kind === "hmac"
      ? hmac(name, value, fingerprints.salt)
      : processDerivations.deriveSync(
          input(name, value),
          recorded.salt ?? fingerprints.salt,
          recorded.params,
        );
  return timingSafeEqual(key, recorded.expected);
}

/** matchesFingerprint on libuv's threadpool (memoised in `derivations`). */
export async function matchesFingerprintAsync(
  fingerprints: SecretFingerprints,
  name: string,
  value: string,
  derivations: Derivations = processDerivations,
  limit?: Limit,
): Promise<boolean | undefined> {
  const recorded = parseRecorded(fingerprints.values[name]);
  if (!recorded) return undefined;
  const key =
    recorded.kind === "hmac"
      ? hmac(name, value, fingerprints.salt)
      : await derivations.derive(
          input(name, value),
          recorded.salt ?? fingerprints.salt,
          recorded.params,
          limit,
        );
  return timingSafeEqual(key, recorded.expected);
}

/**
 * Checks the desired values against the recorded fingerprints off the main thread, so the pure plan
 * (which calls matchesFingerprint) finds every answer ready. `limit` bounds the scrypt calls in
 * flight; `derivations` memoises them (a value under a shared salt is derived once).
 */
export async function checkFingerprints(
  fingerprints: SecretFingerprints,
  secrets: readonly Secret[],
  limit?: Limit,
  derivations: Derivations = processDerivations,
): Promise<CheckedFingerprints> {
  const checked = new Map<string, { value: string; match: boolean | undefined }>();
  // A record under the object's salt: one scrypt proves the whole list unchanged (the common case);
  // only a mismatch checks each value.
  const set = parseRecorded(fingerprints.set);
  if (set?.kind === "scrypt") {
    const input_ = input(SET_NAME, setValue(secrets));
    const key = await derivations.derive(input_, set.salt ?? fingerprints.salt, set.params, limit);
    if (timingSafeEqual(key, set.expected)) {
      for (const { name, value } of secrets) checked.set(name, { value, match: true });
      return { ...fingerprints, checked };
    }
  }
  await Promise.all(
    secrets.map(async ({ name, value }) => {
      const match = await matchesFingerprintAsync(fingerprints, name, value, derivations, limit);
      checked.set(name, { value, match });
    }),
  );
  return { ...fingerprints, checked };
}
