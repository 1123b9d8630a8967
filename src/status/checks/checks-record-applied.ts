import { createHash } from "node:crypto";
import type { ObjectStatus } from "../status-types.js";

// Which applied change a checks record verified. A change applied in place (an external_container's
// custom_url, a secret's value) keeps the revision, so a record naming that revision's id says
// nothing of whether its checks ran before or after it: applied with --no-wait, or killed before
// verify, the old passing record stood and promote moved the revision on it. apply stamps each new
// record with this digest of what the status record says was applied when the checks ran (its
// applied_spec and secret fingerprints), and promote's checks gate holds only while the record's
// applied state still has that digest (docs/environments.md "Checks"). Pure.

type Applied = Pick<ObjectStatus, "applied_spec" | "secret_fingerprints">;

/** The value with every object's keys sorted, so the digest does not depend on key order. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== "object") return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .filter((key) => object[key] !== undefined)
      .map((key) => [key, sorted(object[key])]),
  );
}

/**
 * sha256 (hex) of the applied spec and the secret fingerprints a record holds (none: null). Not
 * spec.verify: plumb runs it, nothing of it is sent, so editing a case changes nothing that runs (a
 * no-op apply re-verifies, and records the spec it read, in its own store only).
 */
export function appliedDigest(record: Applied | undefined): string {
  const { verify: _verify, ...spec } = record?.applied_spec ?? {};
  const applied = { spec: record?.applied_spec ? spec : null, secrets: record?.secret_fingerprints ?? null };
  return createHash("sha256")
    .update(JSON.stringify(sorted(applied)))
    .digest("hex");
}

/** Whether the record's checks verified what it now says was applied (false without checks). */
export function checksMatchApplied(record: (Applied & Pick<ObjectStatus, "checks">) | undefined): boolean {
  const stamp = record?.checks?.applied_digest;
  return stamp !== undefined && stamp === appliedDigest(record);
}
