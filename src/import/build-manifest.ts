import type { Deployment, Organization } from "../schema/deployment.js";
import { fillResourceDefaults, isDerivedDefault } from "../diff/resource-spec.js";
import { isAbsent, type JsonObject } from "../diff/values.js";
import { API_VERSION } from "../schema/constants.js";
import { PLUMB_CREDENTIAL_VARIABLES } from "../manifest/rules/secret-rules.js";
import { MAX_NESTING } from "../manifest/parse/yaml-shape.js";

// `plumb import`: a live deployment as the manifest that plans as a no-op against it. Pure.
// Read-only and server-set fields are left out, and so are values that are only the server's
// derived defaults; secret values cannot be read back, so each becomes valueFrom: {env: NAME}.

export type BuiltManifest = { manifest: JsonObject; notes: string[] };

// The order of the docs and examples/: what the source is, then where it runs, then how big.
const SOURCE_CONFIG_ORDER = [
  "integration_id",
  "repo_url",
  "deployment_type",
  "build_on_push",
  "listener_id",
  "listener_config",
  "custom_url",
  "resource_spec",
  "install_command",
  "build_command",
] as const;
const REVISION_ORDER = ["repo_ref", "graph_config_path", "image_uri"] as const;

const present = (object: JsonObject, keys: readonly string[]): JsonObject => {
  const out: JsonObject = {};
  for (const key of keys) if (!isAbsent(object[key])) out[key] = object[key];
  return out;
};

/** The resource spec as the user would write it: set values, without the defaults derived from them. */
function writtenResourceSpec(live: JsonObject): JsonObject | undefined {
  const stored = fillResourceDefaults(live);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(live))
    if (!isAbsent(value) && !isDerivedDefault(stored, key)) out[key] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The variable a secret's value is read from: its own name, but for a secret named like one of
 * plumb's credentials (PLUMB_API_KEY), which validation refuses as valueFrom.env
 * (secret-env-credential): written so, the imported manifest made the whole repository invalid.
 * That one reads DEPLOYMENT_NAME (prefixed again while another secret has that name).
 */
function variableFor(name: string, names: readonly string[]): string {
  if (!PLUMB_CREDENTIAL_VARIABLES.has(name)) return name;
  let variable = `DEPLOYMENT_${name}`;
  while (names.includes(variable)) variable = `DEPLOYMENT_${variable}`;
  return variable;
}

export function buildDeploymentManifest(live: Deployment): BuiltManifest {
  const notes: string[] = [];
  const config = present(live.source_config, SOURCE_CONFIG_ORDER);
  // custom_url is the server's own for every source but external_container.
  if (live.source !== "external_container") delete config.custom_url;
  const resources = writtenResourceSpec(live.source_config.resource_spec ?? {});
  if (resources) config.resource_spec = resources;
  else delete config.resource_spec;
  const spec: JsonObject = { source: live.source, source_config: config };
  const revision = present(live.source_revision_config, REVISION_ORDER);
  if (Object.keys(revision).length > 0) spec.source_revision_config = revision;
  if (live.source === "internal_source") {
    // The uploaded tarball cannot be downloaded: the manifest points at where its source goes.
    spec.source_path = `${live.name}-source`;
    notes.push(
      `internal_source: the uploaded source cannot be read back; put the agent's source in ${live.name}-source/ next to the manifest (the first apply uploads it)`,
    );
  }
  if (live.secrets.length > 0) {
    const names = live.secrets.map((s) => s.name);
    const variables = names.map((name) => variableFor(name, names));
    spec.secrets = names.map((name, i) => ({ name, valueFrom: { env: variables[i]! } }));
    notes.push(`secrets read from environment variables at plan time: ${variables.join(", ")}`);
    names.forEach((name, i) => {
      if (variables[i] !== name)
        notes.push(
          `secret ${name} is read from ${variables[i]}: ${name} is one of plumb's own credentials, which a manifest never sends to a deployment`,
        );
    });
  }
  if (live.secret_references && live.secret_references.length > 0)
    spec.secret_references = live.secret_references.map((r) => ({ ...r }));
  return {
    manifest: { apiVersion: API_VERSION, kind: "Deployment", metadata: { name: live.name }, spec },
    notes,
  };
}

/** An organization name as a manifest name: a letter first, then letters, digits and '-'. */
function manifestNameOf(displayName: string): string {
  const slug = displayName
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9-]+/g, "-")
    .replace(/^[^A-Za-z]+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return slug || "organization";
}

export function buildOrganizationManifest(live: Organization): BuiltManifest {
  return {
    manifest: {
      apiVersion: API_VERSION,
      kind: "OrganizationAccess",
      metadata: { name: manifestNameOf(live.display_name) },
      spec: {
        jit_provisioning_enabled: live.jit_provisioning_enabled,
        invites_enabled: live.invites_enabled,
      },
    },
    notes: [],
  };
}

/**
 * Whether a built manifest nests deeper than a manifest may (MAX_NESTING levels of mappings and
 * lists, the manifest itself the first): iterative, as a server's answer can nest without end.
 */
export function nestsTooDeep(manifest: JsonObject): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: manifest, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth > MAX_NESTING) return true;
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
