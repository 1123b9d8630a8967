import { createHash, randomBytes, scrypt, scryptSync } from "node:crypto";

// The slow part of secret fingerprints (secret-fingerprint.ts): scrypt derivations, memoised by
// their exact input (parameters, salt, input), so a value recorded under a salt that many records
// share (one per secret source and writer, see saltOfSource) is derived once per process, not once
// per deployment. `count` says how many were really derived: the tests prove the saving with it.

export type ScryptParams = { N: number; r: number; p: number };

/** The cost of new fingerprints (docs/status.md "What secret fingerprints protect"). */
export const FINGERPRINT_PARAMS: ScryptParams = { N: 1024, r: 8, p: 1 };
export const KEY_LENGTH = 32;

/** Bounds the derivations in flight (libuv's threadpool is shared with DNS and file reads). */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

export type Derivations = {
  /** scrypt(input, salt) on libuv's threadpool; a result already derived (or under way) is reused. */
  derive(input: string, salt: string, params: ScryptParams, limit?: Limit): Promise<Buffer>;
  /** The same on the calling thread (the synchronous plan's fallback). */
  deriveSync(input: string, salt: string, params: ScryptParams): Buffer;
  /** How many scrypt derivations were really run (memo hits excluded). */
  readonly count: number;
};

// scrypt needs 128·r·(N + p + 2) bytes (OpenSSL's V and B); the bound is twice that. (256·N·r, the
// bound before, fell short for the smallest trusted N: such a record threw instead of verifying.)
const options = ({ N, r, p }: ScryptParams) => ({ N, r, p, maxmem: 256 * r * (N + p + 2) });

/**
 * A memo of derivations. Keys are digests of the inputs, so no value is kept as text; entries are
 * derived keys (what a fingerprint holds, never a value). Past `maxEntries` the memo starts afresh.
 */
export function createDerivations(maxEntries = 4096): Derivations {
  const memo = new Map<string, { promise: Promise<Buffer>; key?: Buffer }>();
  let count = 0;
  const keyOf = (input: string, salt: string, params: ScryptParams) =>
    createHash("sha256").update(`${params.N}$${params.r}$${params.p}\0${salt}\0${input}`).digest("base64url");
  const remember = (id: string, entry: { promise: Promise<Buffer>; key?: Buffer }) => {
    if (memo.size >= maxEntries) memo.clear();
    memo.set(id, entry);
  };
  return {
    get count() {
      return count;
    },
    derive(input, salt, params, limit = (task) => task()) {
      const id = keyOf(input, salt, params);
      const known = memo.get(id);
      if (known) return known.promise;
      const entry: { promise: Promise<Buffer>; key?: Buffer } = {
        promise: limit(
          () =>
            new Promise<Buffer>((resolve, reject) => {
              count += 1;
              scrypt(input, salt, KEY_LENGTH, options(params), (error, key) =>
                error ? reject(error) : resolve(key),
              );
            }),
        ),
      };
      entry.promise.then(
        (key) => void (entry.key = key),
        // A failure is not remembered: the next check derives again (and reports it).
        () => memo.get(id) === entry && memo.delete(id),
      );
      remember(id, entry);
      return entry.promise;
    },
    deriveSync(input, salt, params) {
      const id = keyOf(input, salt, params);
      const known = memo.get(id)?.key;
      if (known) return known;
      count += 1;
      const key = scryptSync(input, salt, KEY_LENGTH, options(params));
      remember(id, { promise: Promise.resolve(key), key });
      return key;
    },
  };
}

/** The process's derivations: plan, apply and the controller's reconciles share them. */
export const processDerivations: Derivations = createDerivations();

/** A fresh random salt (base64url, 16 bytes). */
export function newSalt(): string {
  return randomBytes(16).toString("base64url");
}

const sourceSalts = new Map<string, string>();

/**
 * The salt this process records values of one secret source under (`env\0NAME`, `file\0PATH`):
 * random, made once per process and source, never derived from the source, so no table can be
 * precomputed for it. Every record this process writes for that source shares it, so the value is
 * derived once per plan however many deployments use it (docs/status.md says what that trades).
 */
export function saltOfSource(source: string): string {
  let salt = sourceSalts.get(source);
  if (salt === undefined) sourceSalts.set(source, (salt = newSalt()));
  return salt;
}
