import { createHash, randomBytes, scrypt, scryptSync, timingSafeEqual } from "node:crypto";

// Secret values cannot be read back from the control plane (they come back as ********), so apply
// records a salted, slow fingerprint of each value it sent and plan compares the desired values
// against it. The fingerprints may be committed to a status branch: scrypt with a per-object salt
// makes guessing values expensive; they protect high-entropy secrets, not guessable ones (see
// docs/status.md). The cost is N=2^10, r=8 (~1.3-2 ms per value on one core). Plan checks them
// off the main thread (async scrypt on libuv's threadpool, see checkFingerprints) while it reads
// live state, and checks the fingerprint of the whole list first (`set`): one scrypt per unchanged
// object instead of one per value (bench/plan.bench.ts). The parameters travel inside each fingerprint, so
// records written with another cost (N=2^9 before) still verify.

export type SecretFingerprints = {
  /** Per-object random salt (base64url). */
  salt: string;
  /** Secret name → fingerprint, e.g. "scrypt$1024$8$1$<base64url>". */
  values: Record<string, string>;
  /**
   * Fingerprint of the whole list (every name and value) under the same salt. Plan checks it first:
   * when nothing changed, that is one scrypt per object instead of one per value. Records written
   * before it existed have none and are checked value by value.
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

type ScryptParams = { N: number; r: number; p: number };
const FINGERPRINT_PARAMS: ScryptParams = { N: 1024, r: 8, p: 1 };
const KEY_LENGTH = 32;
/** Recorded parameters beyond these are not trusted (a forged record could ask for gigabytes). */
const MAX_PARAMS: ScryptParams = { N: 1 << 16, r: 16, p: 4 };

/** A fresh random salt for one object's fingerprints. */
export function newSalt(): string {
  return randomBytes(16).toString("base64url");
}

// The name is bound in, so moving a value to another name counts as a change.
const input = (name: string, value: string) => `${name}\0${value}`;
// The whole list, in name order. It starts with \0, which no secret name can (C identifiers), so it
// never equals the input of a single value.
const SET_NAME = "\0set";
const setValue = (secrets: readonly { name: string; value: string }[]) =>
  JSON.stringify(
    [...secrets]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((s) => [s.name, s.value]),
  );
const options = (params: ScryptParams) => ({ ...params, maxmem: 256 * params.N * params.r });

function derive(name: string, value: string, salt: string, params: ScryptParams): Buffer {
  return scryptSync(input(name, value), salt, KEY_LENGTH, options(params));
}

/** The same as derive, on libuv's threadpool: the event loop stays free. */
function deriveAsync(name: string, value: string, salt: string, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(input(name, value), salt, KEY_LENGTH, options(params), (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

const format = (params: ScryptParams, key: Buffer) =>
  `scrypt$${params.N}$${params.r}$${params.p}$${key.toString("base64url")}`;

/** Fingerprint of one secret value (`params` only to write records of another cost, e.g. in tests). */
function fingerprintSecret(
  name: string,
  value: string,
  salt: string,
  params: ScryptParams = FINGERPRINT_PARAMS,
): string {
  return format(params, derive(name, value, salt, params));
}

/** Fingerprints of a whole secret list under one salt (a new random salt when omitted). */
export function fingerprintSecrets(
  secrets: readonly { name: string; value: string }[],
  salt: string = newSalt(),
): SecretFingerprints {
  const values: Record<string, string> = {};
  for (const secret of secrets) values[secret.name] = fingerprintSecret(secret.name, secret.value, salt);
  if (secrets.length === 0) return { salt, values };
  return { salt, values, set: fingerprintSecret(SET_NAME, setValue(secrets), salt) };
}

/** fingerprintSecrets off the main thread (apply records many at once). */
export async function fingerprintSecretsAsync(
  secrets: readonly { name: string; value: string }[],
  salt: string = newSalt(),
): Promise<SecretFingerprints> {
  // An empty list costs nothing: no scrypt (a body with `secrets: []` is common).
  if (secrets.length === 0) return { salt, values: {} };
  const [set, ...keys] = await Promise.all([
    deriveAsync(SET_NAME, setValue(secrets), salt, FINGERPRINT_PARAMS),
    ...secrets.map((s) => deriveAsync(s.name, s.value, salt, FINGERPRINT_PARAMS)),
  ]);
  const values: Record<string, string> = {};
  secrets.forEach((secret, i) => (values[secret.name] = format(FINGERPRINT_PARAMS, keys[i]!)));
  return { salt, values, set: format(FINGERPRINT_PARAMS, set) };
}

type Recorded = { params: ScryptParams; expected: Buffer };

/** The parameters and key of a recorded fingerprint; undefined when unreadable or not trusted. */
function parseRecorded(recorded: string | undefined): Recorded | undefined {
  const match = recorded === undefined ? null : /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]+)$/.exec(recorded);
  if (!match) return undefined;
  const params = { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  const expected = Buffer.from(match[4] ?? "", "base64url");
  const trusted =
    expected.length === KEY_LENGTH &&
    params.N >= 2 &&
    (params.N & (params.N - 1)) === 0 &&
    params.N <= MAX_PARAMS.N &&
    params.r >= 1 &&
    params.r <= MAX_PARAMS.r &&
    params.p >= 1 &&
    params.p <= MAX_PARAMS.p;
  return trusted ? { params, expected } : undefined;
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
  return timingSafeEqual(derive(name, value, fingerprints.salt, recorded.params), recorded.expected);
}

/** matchesFingerprint on libuv's threadpool. */
export async function matchesFingerprintAsync(
  fingerprints: SecretFingerprints,
  name: string,
  value: string,
): Promise<boolean | undefined> {
  const recorded = parseRecorded(fingerprints.values[name]);
  if (!recorded) return undefined;
  const key = await deriveAsync(name, value, fingerprints.salt, recorded.params);
  return timingSafeEqual(key, recorded.expected);
}

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * scrypt results of one run started ahead of their check (plan starts each object's whole-list check
 * while the manifests are still being parsed), looked up by their exact input: salt, parameters,
 * names and values. A check whose input was started ahead awaits that result instead of deriving
 * it again; a wrong guess costs only its time. Keys are digests, so no value is kept as text.
 */
export type DerivedAhead = Map<string, Promise<Buffer | undefined>>;

const aheadKey = (secrets: readonly { name: string; value: string }[], salt: string, params: ScryptParams) =>
  createHash("sha256")
    .update(`${params.N}$${params.r}$${params.p}\0${salt}\0${setValue(secrets)}`)
    .digest("base64url");

/** Starts the whole-list check of `secrets` against the record's `set` fingerprint, into `ahead`. */
export function deriveSetAhead(
  ahead: DerivedAhead,
  fingerprints: SecretFingerprints,
  secrets: readonly { name: string; value: string }[],
  limit: Limit,
): void {
  const set = parseRecorded(fingerprints.set);
  if (!set || secrets.length === 0) return;
  const key = aheadKey(secrets, fingerprints.salt, set.params);
  if (ahead.has(key)) return;
  const value = setValue(secrets);
  // Never rejects: a failure here is a miss, and the check derives again (and reports it).
  ahead.set(
    key,
    limit(() => deriveAsync(SET_NAME, value, fingerprints.salt, set.params)).catch(() => undefined),
  );
}

/**
 * Checks the desired values against the recorded fingerprints off the main thread, so the pure plan
 * (which calls matchesFingerprint) finds every answer ready. `limit` bounds the scrypt calls in flight;
 * a whole-list check already started in `ahead` (deriveSetAhead) is awaited, not derived again.
 */
export async function checkFingerprints(
  fingerprints: SecretFingerprints,
  secrets: readonly { name: string; value: string }[],
  limit: Limit = (task) => task(),
  ahead?: DerivedAhead,
): Promise<CheckedFingerprints> {
  const checked = new Map<string, { value: string; match: boolean | undefined }>();
  // One scrypt proves the whole list unchanged (the common case); only a mismatch checks each value.
  const set = parseRecorded(fingerprints.set);
  if (set) {
    const early = ahead?.get(aheadKey(secrets, fingerprints.salt, set.params));
    const key =
      (await early) ??
      (await limit(() => deriveAsync(SET_NAME, setValue(secrets), fingerprints.salt, set.params)));
    if (timingSafeEqual(key, set.expected)) {
      for (const { name, value } of secrets) checked.set(name, { value, match: true });
      return { ...fingerprints, checked };
    }
  }
  await Promise.all(
    secrets.map(async ({ name, value }) => {
      const match = await limit(() => matchesFingerprintAsync(fingerprints, name, value));
      checked.set(name, { value, match });
    }),
  );
  return { ...fingerprints, checked };
}
