import type { Deployment, ListenerConfig, Secret } from "../schema/deployment.js";
import type { DeploymentSpec } from "../schema/manifest.js";
import { diffResourceSpec } from "./diff-resource-spec.js";
import { diffSecrets } from "./secrets/diff-secrets.js";
import { type DesiredSource, planUpload, type RecordedSource, uploadField } from "./diff-source.js";
import {
  cannotClear,
  type FieldChange,
  IMMUTABLE_SOURCE_CONFIG,
  UUID_SOURCE_CONFIG,
  LISTENER_NAMESPACE_FIELD,
} from "./fields.js";
import { type ChangeError, type PlannedUpload, UPLOAD_PLACEHOLDER } from "./plan/plan-types.js";
import type { SecretFingerprints } from "./secrets/secret-fingerprint.js";
import { deepEqual, isAbsent, type JsonObject, sortByName } from "./values.js";

/** Desired against live for one existing deployment: normalised states, changed fields, PATCH body. */
export type DeploymentDiff = {
  /** Normalised live, projected on the fields the manifest manages. */
  live: JsonObject;
  /** Normalised desired; secret values are real. */
  desired: JsonObject;
  fields: FieldChange[];
  warnings: ChangeError[];
  changedSecrets: string[];
  /** With secrets compared: a desired value is not the one last applied (by its fingerprint). */
  secretValuesMoved?: boolean;
  /** Minimal PATCH body (no immutable fields); empty when nothing can be sent. */
  body: JsonObject;
  /** internal_source: the upload needed (its object path is a placeholder in `body`), or null. */
  upload: PlannedUpload | null;
};

export type DeploymentDiffInput = {
  name: string;
  spec: DeploymentSpec;
  /** Resolved values of spec.secrets (undefined without a secrets list, or when they could not be resolved). */
  secrets: readonly Secret[] | undefined;
  live: Deployment;
  fingerprints: SecretFingerprints | undefined;
  /** internal_source: the content of spec.source_path and what plumb last uploaded (status store). */
  source?: { desired: DesiredSource; recorded: RecordedSource | undefined } | undefined;
};

type Section = { live: JsonObject; desired: JsonObject; body: JsonObject };
const section = (): Section => ({ live: {}, desired: {}, body: {} });

export function diffDeployment(input: DeploymentDiffInput): DeploymentDiff {
  const { spec, live } = input;
  const fields: FieldChange[] = [];
  const warnings: ChangeError[] = [];
  const out: DeploymentDiff = {
    live: { name: live.name, source: live.source },
    desired: { name: input.name, source: spec.source },
    fields,
    warnings,
    changedSecrets: [],
    body: {},
    upload: null,
  };
  if (spec.source !== live.source) {
    fields.push({ field: "source", class: "immutable", old: live.source, new: spec.source });
  }

  if (spec.source_config) diffSourceConfig(spec, live, out);
  if (spec.source_revision_config) diffRevisionConfig(spec, live, out);
  if (input.source) diffSource(input.source, live, out);
  // Secrets that could not be resolved (an unset env variable, a missing file) are unknown, not
  // changed: the object is not planned for that error, and no `-NAME` suggests a deletion.
  if (spec.secrets && input.secrets !== undefined) diffSecretValues(input.secrets, input, out);
  if (spec.secret_references !== undefined) diffSecretReferences(spec.secret_references, live, out);

  if (spec.revision_source && fields.some((f) => f.class === "revision")) {
    out.body.revision_source = spec.revision_source;
  }
  return out;
}

/** source_config: each key written in the manifest, against live (resource_spec and listener_config by their own rules). */
function diffSourceConfig(spec: DeploymentSpec, live: Deployment, out: DeploymentDiff): void {
  const sc = section();
  const liveConfig = (live.source_config ?? {}) as JsonObject;
  for (const [key, value] of Object.entries(spec.source_config as JsonObject)) {
    const liveValue = liveConfig[key];
    const field = `source_config.${key}`;
    // The server sets custom_url for gitrepo: never managed there.
    if (key === "custom_url" && spec.source === "gitrepo") continue;
    if (isAbsent(value)) {
      if (!isAbsent(liveValue)) out.warnings.push(cannotClear(field, liveValue));
      continue;
    }
    if (key === "resource_spec") {
      const rs = diffResourceSpec(value as JsonObject, liveValue as JsonObject | null);
      sc.live[key] = rs.live;
      sc.desired[key] = rs.desired;
      out.fields.push(...rs.fields);
      if (rs.body) sc.body[key] = rs.body;
      continue;
    }
    if (key === "listener_config") {
      diffListenerConfig(value, liveValue as ListenerConfig | null, sc, out.fields, out.warnings);
      continue;
    }
    const desired = UUID_SOURCE_CONFIG.has(key) && typeof value === "string" ? value.toLowerCase() : value;
    sc.desired[key] = desired;
    if (!isAbsent(liveValue)) sc.live[key] = liveValue;
    if (deepEqual(desired, liveValue)) continue;
    const immutable = IMMUTABLE_SOURCE_CONFIG.has(key);
    out.fields.push({
      field,
      class: immutable ? "immutable" : "in_place",
      old: liveValue ?? null,
      new: value,
    });
    if (!immutable) sc.body[key] = value;
  }
  out.live.source_config = sc.live;
  out.desired.source_config = sc.desired;
  if (Object.keys(sc.body).length > 0) out.body.source_config = sc.body;
}

/** source_revision_config: every key written in the manifest makes a revision when it differs. */
function diffRevisionConfig(spec: DeploymentSpec, live: Deployment, out: DeploymentDiff): void {
  const src = section();
  const liveRevision = (live.source_revision_config ?? {}) as JsonObject;
  for (const [key, value] of Object.entries(spec.source_revision_config as JsonObject)) {
    const liveValue = liveRevision[key];
    const field = `source_revision_config.${key}`;
    if (isAbsent(value)) {
      if (!isAbsent(liveValue)) out.warnings.push(cannotClear(field, liveValue));
      continue;
    }
    src.desired[key] = value;
    if (!isAbsent(liveValue)) src.live[key] = liveValue;
    if (deepEqual(value, liveValue)) continue;
    out.fields.push({ field, class: "revision", old: liveValue ?? null, new: value });
    src.body[key] = value;
  }
  out.live.source_revision_config = src.live;
  out.desired.source_revision_config = src.desired;
  if (Object.keys(src.body).length > 0) out.body.source_revision_config = src.body;
}

/** spec.secrets, resolved: the whole list is sent when a name or a value differs. */
function diffSecretValues(
  resolved: readonly Secret[],
  input: DeploymentDiffInput,
  out: DeploymentDiff,
): void {
  const { live } = input;
  const secrets = diffSecrets(resolved, live.secrets ?? [], input.fingerprints);
  out.live.secrets = secrets.live;
  out.desired.secrets = secrets.desired;
  out.warnings.push(...secrets.warnings);
  out.changedSecrets = secrets.changedNames;
  out.secretValuesMoved = secrets.valuesMoved;
  if (secrets.changed) {
    const names = (list: readonly Secret[]) => sortByName(list).map((s) => s.name);
    out.fields.push({
      field: "secrets",
      class: "revision",
      old: names(live.secrets ?? []),
      new: names(resolved),
      sensitive: true,
    });
    out.body.secrets = resolved.map(({ name, value }) => ({ name, value }));
  }
}

/** secret_references (external_container): in place; null asks to clear, which PATCH cannot. */
function diffSecretReferences(
  desired: NonNullable<DeploymentSpec["secret_references"]> | null,
  live: Deployment,
  out: DeploymentDiff,
): void {
  const liveRefs = live.secret_references ?? [];
  if (desired === null) {
    if (liveRefs.length > 0) out.warnings.push(cannotClear("secret_references", liveRefs));
  } else {
    out.live.secret_references = sortByName(liveRefs);
    out.desired.secret_references = sortByName(desired);
    if (!deepEqual(out.live.secret_references, out.desired.secret_references)) {
      out.fields.push({
        field: "secret_references",
        class: "in_place",
        old: liveRefs,
        new: desired,
      });
      out.body.secret_references = desired;
    }
  }
}

/**
 * listener_config has one key, k8s_namespace, and PATCH cannot change it (spec 4.1 rule 2): it is
 * compared (and refused when it differs), never sent.
 */
function diffListenerConfig(
  desired: ListenerConfig,
  live: ListenerConfig | null | undefined,
  sc: Section,
  fields: FieldChange[],
  warnings: ChangeError[],
): void {
  const want = desired.k8s_namespace;
  const have = live?.k8s_namespace;
  sc.desired.listener_config = isAbsent(want) ? {} : { k8s_namespace: want };
  sc.live.listener_config = isAbsent(want) || isAbsent(have) ? {} : { k8s_namespace: have };
  if (!("k8s_namespace" in desired)) return;
  if (isAbsent(want)) {
    if (!isAbsent(have)) warnings.push(cannotClear(LISTENER_NAMESPACE_FIELD, have));
  } else if (want !== have) {
    fields.push({ field: LISTENER_NAMESPACE_FIELD, class: "immutable", old: have ?? null, new: want });
  }
}

/**
 * The source tarball compared by content: normalised, source_tarball_path is the digest of what it
 * holds (the recorded digest when the live path is the one plumb uploaded, else the raw live path).
 */
function diffSource(
  source: NonNullable<DeploymentDiffInput["source"]>,
  live: Deployment,
  out: DeploymentDiff,
) {
  const livePath = live.source_revision_config?.source_tarball_path ?? null;
  const { desired, recorded } = source;
  const liveRevision = (out.live.source_revision_config ?? {}) as JsonObject;
  const known = recorded && recorded.object_path === livePath ? recorded.digest : livePath;
  if (!isAbsent(known)) liveRevision.source_tarball_path = known;
  out.live.source_revision_config = liveRevision;
  out.desired.source_revision_config = {
    ...((out.desired.source_revision_config ?? {}) as JsonObject),
    source_tarball_path: desired.digest,
  };
  out.upload = planUpload(desired, livePath, recorded);
  if (!out.upload) return;
  out.fields.push(uploadField(out.upload));
  out.body.source_revision_config = {
    ...((out.body.source_revision_config ?? {}) as JsonObject),
    source_tarball_path: UPLOAD_PLACEHOLDER,
  };
}
