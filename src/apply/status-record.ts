import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import {
  type SecretFingerprints,
  type SecretOrigin,
  fingerprintSecretsAsync,
} from "../diff/secrets/secret-fingerprint.js";
import type { Manifest } from "../schema/manifest.js";
import type { ApplyResult } from "./apply-types.js";
import type { ObjectStatus } from "../status/status-types.js";
import { appliedDigest } from "../status/checks/checks-record-applied.js";

/** Canonical JSON: keys sorted at every level, so a digest does not depend on key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Digest of a manifest document as applied. Literal secret values are left out (the digest is
 * committed to the status branch; the fingerprints say whether values changed).
 */
export function manifestDigest(manifest: Manifest): string {
  const copy = structuredClone(manifest) as { spec?: { secrets?: Array<{ value?: string }> } };
  for (const secret of copy.spec?.secrets ?? []) if (secret.value !== undefined) secret.value = "<redacted>";
  return `sha256:${createHash("sha256").update(canonicalJson(copy)).digest("hex")}`;
}

/** The secrets a request body sent; undefined when it sent none. */
function sentSecrets(
  body: Record<string, unknown> | undefined,
): { name: string; value: string }[] | undefined {
  const secrets = body?.secrets;
  if (!Array.isArray(secrets)) return undefined;
  return secrets.filter(
    (s): s is { name: string; value: string } =>
      !!s &&
      typeof (s as { name?: unknown }).name === "string" &&
      typeof (s as { value?: unknown }).value === "string",
  );
}

/**
 * Fingerprints of the secrets a request body sent, off the main thread; undefined when it sent none.
 * `loaded` (the manifest) tells each value's origin: a literal is in git already (a fast HMAC), a
 * value from env or a file shares its source's salt (secret-fingerprint.ts).
 */
export async function fingerprintsOfBodyAsync(
  body: Record<string, unknown> | undefined,
  loaded?: { manifest: Manifest; file: string },
): Promise<SecretFingerprints | undefined> {
  const list = sentSecrets(body);
  return list && fingerprintSecretsAsync(list, undefined, secretOriginsOf(loaded));
}

/** Where each secret of a manifest comes from, by name; undefined without a manifest. */
export function secretOriginsOf(
  loaded: { manifest: Manifest; file: string } | undefined,
): Map<string, SecretOrigin> | undefined {
  if (!loaded) return undefined;
  type Entry = { name: string; value?: string; valueFrom?: { env?: string; file?: string } };
  const secrets = (loaded.manifest.spec as { secrets?: Entry[] }).secrets ?? [];
  const origins = new Map<string, SecretOrigin>();
  for (const { name, value, valueFrom } of secrets) {
    if (valueFrom?.env !== undefined) origins.set(name, { source: `env\0${valueFrom.env}` });
    else if (valueFrom?.file !== undefined)
      origins.set(name, { source: `file\0${join(dirname(loaded.file), valueFrom.file)}` });
    else if (value !== undefined) origins.set(name, { literal: true });
  }
  return origins;
}

export type RecordInput = {
  result: ApplyResult;
  previous: ObjectStatus | undefined;
  latestRevisionId: string | null;
  activeRevisionId: string | null;
  gitCommit: string | null;
  manifestDigest: string | null | undefined;
  /** plumb/prune of the applied manifest ("disabled" or null); undefined keeps the previous one. */
  prune?: "disabled" | null | undefined;
  /** The manifest file of the object (relative to the manifest directory); undefined keeps the previous one. */
  manifestFile?: string | undefined;
  /** The manifest's spec as sent (appliedSpecOf); kept only once it is live (sent, or converged). */
  appliedSpec?: Record<string, unknown> | null | undefined;
  /** New fingerprints when secrets were sent; undefined keeps the previous ones. */
  fingerprints: SecretFingerprints | undefined;
  /** True when this apply sent the object a request. */
  sent: boolean;
  /** The source uploaded and set by an accepted PATCH; undefined keeps the previous one. */
  sourceUpload?: ObjectStatus["source_upload"] | undefined;
  now: number;
};

/** Pure: the status record of one object after apply. */
export function buildObjectStatus(input: RecordInput): ObjectStatus {
  const { result, previous } = input;
  // Only internal_source records carry it, so other records keep their shape.
  const sourceUpload = input.sourceUpload ?? previous?.source_upload;
  const manifestFile = input.manifestFile ?? previous?.manifest_file;
  // What live now holds of the manifest (the three-way model's last-applied, src/diff/three-way.ts):
  // a request that was not sent, or failed before landing, leaves the previous one.
  const landed = input.sent || result.outcome === "converged";
  const appliedSpec = landed && input.appliedSpec !== undefined ? input.appliedSpec : previous?.applied_spec;
  const fingerprints = input.fingerprints ?? previous?.secret_fingerprints ?? null;
  const prune = input.prune === undefined || result.outcome === "skipped" ? previous?.prune : input.prune;
  const failed = result.outcome === "failed" || result.outcome === "timeout" || result.outcome === "skipped";
  const latest = input.latestRevisionId ?? previous?.latest_revision_id ?? null;
  const active = input.activeRevisionId ?? previous?.active_revision_id ?? null;
  // The active revision is the last DEPLOYED one: when it is also the latest (e.g. a no-op after a
  // restart, where apply waited for nothing) that is the revision status, not an older record's.
  const deployedNow = !failed && latest !== null && latest === active;
  return {
    kind: result.kind,
    name: result.name,
    id: result.id ?? previous?.id ?? null,
    latest_revision_id: latest,
    active_revision_id: active,
    revision_status:
      result.revision_status ?? (deployedNow ? "DEPLOYED" : (previous?.revision_status ?? null)),
    sync: result.sync,
    health: result.health,
    git_commit: result.outcome === "skipped" ? (previous?.git_commit ?? null) : input.gitCommit,
    manifest_digest:
      result.outcome === "skipped" ? (previous?.manifest_digest ?? null) : (input.manifestDigest ?? null),
    secret_fingerprints: fingerprints,
    verify_thread_id: result.verify?.thread_id ?? previous?.verify_thread_id ?? null,
    ...(result.verify?.checks || previous?.checks
      ? {
          checks: checksOf(result, previous, {
            applied_spec: appliedSpec,
            secret_fingerprints: fingerprints,
          }),
        }
      : {}),
    applied_at: input.sent ? new Date(input.now).toISOString() : (previous?.applied_at ?? null),
    updated_at: new Date(input.now).toISOString(),
    last_error: failed || result.verify?.ok === false ? result.message : null,
    ...(sourceUpload ? { source_upload: sourceUpload } : {}),
    ...(prune ? { prune } : {}),
    ...(appliedSpec ? { applied_spec: appliedSpec } : {}),
    ...(manifestFile ? { manifest_file: manifestFile } : {}),
  };
}

/**
 * The record's checks: this apply's, stamped with the applied state they verified (the record's
 * applied_spec and fingerprints as written now), or the previous ones as they were.
 */
function checksOf(
  result: ApplyResult,
  previous: ObjectStatus | undefined,
  applied: Pick<ObjectStatus, "applied_spec" | "secret_fingerprints">,
): ObjectStatus["checks"] {
  const fresh = result.verify?.checks;
  if (!fresh) return previous?.checks ?? null;
  return { ...fresh, applied_digest: appliedDigest(applied) };
}

/** A manifest's spec as the status record keeps it: literal secret values left out (as manifestDigest). */
export function appliedSpecOf(
  loaded: { manifest: Manifest } | undefined,
): Record<string, unknown> | undefined {
  if (!loaded) return undefined;
  const spec = structuredClone(loaded.manifest.spec) as { secrets?: Array<{ value?: string }> };
  for (const secret of spec.secrets ?? []) if (secret.value !== undefined) secret.value = "<redacted>";
  return spec;
}

/** The plumb/prune setting of a manifest for its status record; undefined when there is no manifest. */
export function pruneSettingOf(loaded: { manifest: Manifest } | undefined): "disabled" | null | undefined {
  if (!loaded) return undefined;
  const annotations = (loaded.manifest.metadata as { annotations?: Record<string, string> }).annotations;
  return annotations?.["plumb/prune"] === "disabled" ? "disabled" : null;
}
