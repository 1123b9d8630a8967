import { type Static, Type } from "@sinclair/typebox";
import { C_IDENTIFIER_PATTERN, DEPLOYMENT_NAME_PATTERN, Nullable, Uuid } from "./common.js";
import { ResourceSpec } from "./resource-spec.js";

// Shapes of the control plane API (spec sections 2 and 4.1), shared by the local control plane,
// the API clients and the manifest schema.

export const SOURCES = ["gitrepo", "external_container", "internal_container", "internal_source"] as const;
export const DeploymentSource = Type.Union(
  SOURCES.map((source) => Type.Literal(source)),
  { description: "Where the deployment's code comes from. Cannot change after creation." },
);
export type DeploymentSource = (typeof SOURCES)[number];

export const REVISION_SOURCES = ["gitrepo", "internal_container", "internal_source"] as const;
export const RevisionSource = Type.Union(
  REVISION_SOURCES.map((source) => Type.Literal(source)),
  {
    description: "Overrides the source for one revision; the deployment's source when omitted.",
  },
);
export type RevisionSource = (typeof REVISION_SOURCES)[number];

const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;

export const ListenerConfig = Type.Object(
  {
    k8s_namespace: Type.Optional(
      Nullable(
        Type.String(),
        "Cluster namespace to deploy to (listeners of compute type k8s). Cannot be changed by patch.",
      ),
    ),
  },
  {
    additionalProperties: false,
    description: "Listener settings (external_container); validated by the listener's compute type.",
  },
);
export type ListenerConfig = Static<typeof ListenerConfig>;

/** SourceConfig: fields that change without a new revision (except resource_spec), or never. */
export const SourceConfig = Type.Object(
  {
    integration_id: Type.Optional(
      Nullable(
        Uuid("Git integration id"),
        "Git integration id from GET /v1/integrations/gitrepo/install (gitrepo only). Immutable.",
      ),
    ),
    repo_url: Type.Optional(Nullable(Type.String(), "Git repository URL (gitrepo only). Immutable.")),
    deployment_type: Type.Optional(
      Nullable(
        Type.Union(DEPLOYMENT_TYPES.map((t) => Type.Literal(t))),
        "dev_free, dev or prod (gitrepo only). Immutable.",
      ),
    ),
    build_on_push: Type.Optional(
      Nullable(
        Type.Boolean(),
        "Build a new revision on push to repo_ref (gitrepo only); not allowed when repo_ref is a tag.",
      ),
    ),
    custom_url: Type.Optional(
      Nullable(
        Type.String(),
        "Agent server URL: settable for external_container; set by the server for gitrepo.",
      ),
    ),
    resource_spec: Type.Optional(
      Nullable(ResourceSpec, "Compute resources (external_container). Replaced whole; creates a revision."),
    ),
    listener_id: Type.Optional(
      Nullable(
        Uuid("Listener id"),
        "Listener id from GET /v2/listeners (external_container only). Immutable.",
      ),
    ),
    listener_config: Type.Optional(Nullable(ListenerConfig, "Listener settings (external_container only).")),
    install_command: Type.Optional(
      Nullable(Type.String(), "Install command, run from the repository root (JS deployments only)."),
    ),
    build_command: Type.Optional(
      Nullable(
        Type.String(),
        "Build command, run from the graph configuration's directory (JS deployments only).",
      ),
    ),
  },
  { additionalProperties: false, description: "Source settings; validated according to source." },
);
export type SourceConfig = Static<typeof SourceConfig>;

/** SourceRevisionConfig (request form: no repo_commit_sha). Any non-null value creates a revision. */
export const SourceRevisionConfigRequest = Type.Object(
  {
    repo_ref: Type.Optional(
      Nullable(Type.String({ minLength: 1 }), "Branch name, or a tag as refs/tags/NAME (gitrepo only)."),
    ),
    graph_config_path: Type.Optional(
      Nullable(
        Type.String({ minLength: 1 }),
        "Path of the graph configuration file; required for gitrepo and internal_source, null otherwise.",
      ),
    ),
    image_uri: Type.Optional(
      Nullable(Type.String({ minLength: 1 }), "Container image URI (container sources)."),
    ),
    source_tarball_path: Type.Optional(
      Nullable(
        Type.String({ minLength: 1 }),
        "Object path from POST /v2/deployments/{id}/upload-url (internal_source only).",
      ),
    ),
  },
  { additionalProperties: false, description: "Fields whose change creates a new revision." },
);
export type SourceRevisionConfigRequest = Static<typeof SourceRevisionConfigRequest>;

export const SourceRevisionConfig = Type.Composite([
  SourceRevisionConfigRequest,
  Type.Object({
    repo_commit_sha: Type.Optional(Nullable(Type.String(), "Commit built (gitrepo; read-only).")),
  }),
]);
export type SourceRevisionConfig = Static<typeof SourceRevisionConfig>;

export const Secret = Type.Object(
  {
    name: Type.String({
      pattern: C_IDENTIFIER_PATTERN,
      description: "Environment variable name: a C identifier.",
    }),
    value: Type.String({ description: "Secret value; responses mask it as ********." }),
  },
  {
    additionalProperties: false,
    description: "A secret exposed to the container as an environment variable.",
  },
);
export type Secret = Static<typeof Secret>;

export const SecretReference = Type.Object(
  {
    name: Type.String({ pattern: C_IDENTIFIER_PATTERN, description: "Environment variable to fill." }),
    secret_name: Type.String({
      minLength: 1,
      description: "Existing cluster secret in the deployment's namespace.",
    }),
    secret_key: Type.String({ minLength: 1, description: "Key inside that secret." }),
  },
  {
    additionalProperties: false,
    description: "A cluster secret exposed as an environment variable (external_container only).",
  },
);
export type SecretReference = Static<typeof SecretReference>;

export const DeploymentCreateRequest = Type.Object(
  {
    name: Type.String({ pattern: DEPLOYMENT_NAME_PATTERN, description: "Deployment name. Immutable." }),
    source: DeploymentSource,
    source_config: SourceConfig,
    source_revision_config: SourceRevisionConfigRequest,
    secrets: Type.Array(Secret, { description: "Secrets; may be empty." }),
    secret_references: Type.Optional(
      Nullable(Type.Array(SecretReference), "Cluster secret references (external_container only)."),
    ),
  },
  { additionalProperties: false },
);
export type DeploymentCreateRequest = Static<typeof DeploymentCreateRequest>;

export const DeploymentPatchRequest = Type.Object(
  {
    revision_source: Type.Optional(Nullable(RevisionSource)),
    source_config: Type.Optional(Nullable(SourceConfig)),
    source_revision_config: Type.Optional(Nullable(SourceRevisionConfigRequest)),
    secrets: Type.Optional(Nullable(Type.Array(Secret))),
    secret_references: Type.Optional(Nullable(Type.Array(SecretReference))),
  },
  { additionalProperties: false },
);
export type DeploymentPatchRequest = Static<typeof DeploymentPatchRequest>;

const DEPLOYMENT_STATUSES = ["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** A Deployment as the API returns it (spec 2.1). Secret values are masked. */
export const Deployment = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  name: Type.String(),
  source: DeploymentSource,
  source_config: SourceConfig,
  source_revision_config: SourceRevisionConfig,
  secrets: Type.Array(Secret),
  secret_references: Type.Optional(Nullable(Type.Array(SecretReference))),
  created_at: Type.String(),
  updated_at: Type.String(),
  status: Type.Union(DEPLOYMENT_STATUSES.map((s) => Type.Literal(s))),
  latest_revision_id: Nullable(Type.String()),
  active_revision_id: Nullable(Type.String()),
  image_version: Type.Optional(Nullable(Type.String())),
});
export type Deployment = Static<typeof Deployment>;

/** A page of a list endpoint: `offset` is the value to pass for the next page. */
export type Page<T> = { resources: T[]; offset: number };

export const Organization = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  jit_provisioning_enabled: Type.Boolean(),
  invites_enabled: Type.Boolean(),
  sso_login_slug: Type.String(),
});
export type Organization = Static<typeof Organization>;

export { MASKED_SECRET_VALUE } from "./constants.js";
