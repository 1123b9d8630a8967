import { MASKED_SECRET_VALUE } from "../../schema/constants.js";
import type { Secret } from "../../schema/deployment.js";
import type { ChangeError } from "../plan/plan-types.js";
import { matchesFingerprint, type SecretFingerprints } from "./secret-fingerprint.js";
import { sortByName } from "../values.js";

/** The secret list of one deployment compared by name plus the fingerprints of the last applied values. */
export type SecretsDiff = {
  /** Normalised live list: a value is the desired one when its fingerprint matches, else masked. */
  live: Secret[];
  desired: Secret[];
  changed: boolean;
  /** Names added, or whose value changed or is unknown. */
  changedNames: string[];
  /** A desired value is not the one the fingerprints recorded (or none is): git moved since the last apply. */
  valuesMoved: boolean;
  warnings: ChangeError[];
};

const SECRETS_UNKNOWN = "secret values unknown, will be sent";

export function diffSecrets(
  desired: readonly Secret[],
  live: readonly Secret[],
  fingerprints: SecretFingerprints | undefined,
): SecretsDiff {
  const wanted = new Map(desired.map((secret) => [secret.name, secret.value]));
  const recorded = new Map(
    desired.map(({ name, value }) => [
      name,
      fingerprints ? matchesFingerprint(fingerprints, name, value) : undefined,
    ]),
  );
  let unknown = false;
  const normalisedLive = sortByName(live).map(({ name }) => {
    const value = wanted.get(name);
    if (value === undefined) return { name, value: MASKED_SECRET_VALUE };
    const match = recorded.get(name);
    if (match === undefined) unknown = true;
    return { name, value: match === true ? value : MASKED_SECRET_VALUE };
  });
  const liveValues = new Map(normalisedLive.map((secret) => [secret.name, secret.value]));
  const changedNames = sortByName(desired)
    .filter((secret) => liveValues.get(secret.name) !== secret.value)
    .map((secret) => secret.name);
  const changed = changedNames.length > 0 || live.some((secret) => !wanted.has(secret.name));
  return {
    live: normalisedLive,
    desired: sortByName(desired).map(({ name, value }) => ({ name, value })),
    changed,
    changedNames,
    valuesMoved: desired.some((secret) => recorded.get(secret.name) !== true),
    warnings: unknown ? [{ field: "secrets", message: SECRETS_UNKNOWN }] : [],
  };
}
