import { type Static, Type } from "@sinclair/typebox";
import { C_IDENTIFIER_PATTERN, DEPLOYMENT_NAME_PATTERN, Nullable } from "./common.js";
import {
  DeploymentSource,
  RevisionSource,
  SecretReference,
  SourceConfig,
  SourceRevisionConfigRequest,
} from "./deployment.js";
import { DeploymentEnvironments, DeploymentOverrides } from "./environment.js";
import { API_VERSION } from "./constants.js";

// The manifest format users write (apiVersion plumb/v1). `spec` mirrors the API fields.

export { DOCUMENT_KINDS, type ManifestKind } from "./constants.js";

const Metadata = Type.Object(
  {
    name: Type.String({
      pattern: DEPLOYMENT_NAME_PATTERN,
      description: "Object name: a letter first, then letters, digits and '-'; at most 63 characters.",
    }),
    labels: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: "Labels for selecting subsets of objects." }),
    ),
    annotations: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Instructions to plumb (keys starting "plumb/") and free-form notes. "plumb/prune": "disabled" keeps apply --prune from ever deleting this deployment once its manifest is removed.',
      }),
    ),
  },
  { additionalProperties: false, description: "Identity of the object." },
);

const SecretValueFrom = Type.Union(
  [
    Type.Object(
      {
        env: Type.String({
          pattern: C_IDENTIFIER_PATTERN,
          description: "Environment variable holding the value.",
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        file: Type.String({
          minLength: 1,
          description: "File holding the value, relative to the manifest and inside the repository.",
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "Where plumb reads the value at plan/apply time: {env: NAME} or {file: PATH}." },
);

const ManifestSecret = Type.Object(
  {
    name: Type.String({
      pattern: C_IDENTIFIER_PATTERN,
      description: "Environment variable name: a C identifier.",
    }),
    value: Type.Optional(
      Type.String({ description: "Literal value, stored in git in plain sight; prefer valueFrom." }),
    ),
    valueFrom: Type.Optional(SecretValueFrom),
  },
  { additionalProperties: false, description: "A secret: exactly one of value or valueFrom." },
);
type ManifestSecret = Static<typeof ManifestSecret>;

/** One case of spec.verify.cases: a question and what its answer must (not) hold. */
export const VerifyCase = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "Name of the case, unique in the list; reports and the status record name it.",
    }),
    input: Type.Union(
      [
        Type.String({
          minLength: 1,
          description: "The user message, sent as {messages: [{role: user, content}]}.",
        }),
        Type.Record(Type.String(), Type.Unknown(), {
          description: "Run input as the agent server takes it.",
        }),
      ],
      { description: "The question: a user message, or a whole run input such as {messages: [...]}." },
    ),
    expect_contains: Type.Optional(
      Type.String({ minLength: 1, description: "Text the AI answer must contain." }),
    ),
    expect_not_contains: Type.Optional(
      Type.String({ minLength: 1, description: "Text the AI answer must not contain." }),
    ),
    expect_regex: Type.Optional(
      Type.String({
        minLength: 1,
        description: "A JavaScript regular expression the AI answer must match (searched, not anchored).",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "A case of the agent's checks; every expectation given must hold (none: any answer passes).",
  },
);
export type VerifyCase = Static<typeof VerifyCase>;

export const Verify = Type.Object(
  {
    assistant_id: Type.String({ minLength: 1, description: "Assistant id or graph name to run." }),
    input: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The smoke question's run input, e.g. {messages: [{role: user, content: ping}]}: asked on plumb's own thread. Either input or cases (or both).",
      }),
    ),
    expect_contains: Type.Optional(
      Type.String({ description: "Text the smoke question's AI answer must contain." }),
    ),
    timeout_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: "Time allowed for each run." }),
    ),
    cases: Type.Optional(
      Type.Array(VerifyCase, {
        minItems: 1,
        maxItems: 100,
        description: "The agent's checks: each case runs `repeat` times, each run on a fresh thread.",
      }),
    ),
    repeat: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 20,
        default: 1,
        description: "Runs per case (and of the smoke question).",
      }),
    ),
    min_pass_ratio: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: 1,
        description: "Least share of runs that must pass; below it apply fails (verify-failed).",
      }),
    ),
    max_latency_p95_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Largest 95th percentile of the runs' total time, in ms; above it apply fails (verify-failed).",
      }),
    ),
    concurrency: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 16, default: 4, description: "Case runs in flight at once." }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "The agent's checks, run on the agent server after each revision is DEPLOYED: a smoke question (input) and/or cases.",
  },
);
export type Verify = Static<typeof Verify>;

export const DeploymentSpec = Type.Object(
  {
    source: DeploymentSource,
    source_path: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "plumb only, internal_source only (and required there): the directory, relative to this manifest and inside the manifest root, that plumb packs into a gzip tarball, uploads and sets as source_revision_config.source_tarball_path at apply time. Never sent to the API.",
      }),
    ),
    source_config: Type.Optional(SourceConfig),
    source_revision_config: Type.Optional(SourceRevisionConfigRequest),
    secrets: Type.Optional(
      Type.Array(ManifestSecret, { description: "Secrets; the whole list is sent when any changes." }),
    ),
    secret_references: Type.Optional(
      Nullable(Type.Array(SecretReference), "Cluster secret references (external_container only)."),
    ),
    revision_source: Type.Optional(RevisionSource),
    verify: Type.Optional(Verify),
  },
  { additionalProperties: false, description: "Desired state; mirrors the control plane fields." },
);
export type DeploymentSpec = Static<typeof DeploymentSpec>;

export const DeploymentManifest = Type.Object(
  {
    apiVersion: Type.Literal(API_VERSION, { description: "Always plumb/v1." }),
    kind: Type.Literal("Deployment", { description: "An agent-server deployment." }),
    metadata: Type.Composite(
      [Metadata, Type.Object({ environments: Type.Optional(DeploymentEnvironments) })],
      {
        additionalProperties: false,
        description: "Identity of the object.",
      },
    ),
    spec: DeploymentSpec,
    environments: Type.Optional(DeploymentOverrides),
  },
  {
    additionalProperties: false,
    $id: "https://plumb.dev/schemas/deployment.json",
    title: "plumb Deployment",
  },
);
export type DeploymentManifest = Static<typeof DeploymentManifest>;

export const OrganizationAccessSpec = Type.Object(
  {
    jit_provisioning_enabled: Type.Optional(
      Type.Boolean({
        description: "Provision SSO users automatically with the default role and workspaces.",
      }),
    ),
    invites_enabled: Type.Optional(
      Type.Boolean({ description: "Allow administrators to invite users before sign-in." }),
    ),
  },
  { additionalProperties: false, description: "SSO onboarding settings; absent fields are unmanaged." },
);
export type OrganizationAccessSpec = Static<typeof OrganizationAccessSpec>;

export const OrganizationAccessManifest = Type.Object(
  {
    apiVersion: Type.Literal(API_VERSION, { description: "Always plumb/v1." }),
    kind: Type.Literal("OrganizationAccess", { description: "How SSO users join the organization." }),
    metadata: Metadata,
    spec: OrganizationAccessSpec,
  },
  {
    additionalProperties: false,
    $id: "https://plumb.dev/schemas/organization-access.json",
    title: "plumb OrganizationAccess",
  },
);
export type OrganizationAccessManifest = Static<typeof OrganizationAccessManifest>;

export type Manifest = DeploymentManifest | OrganizationAccessManifest;
