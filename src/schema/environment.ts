import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { C_IDENTIFIER_PATTERN } from "./common.js";

// `kind: Environment` (apiVersion plumb/v1): one place a repository's deployments run, with the
// control plane it talks to, the defaults its deployments share and (later) how it is promoted to.
// docs/environments.md describes it.

/** Environment names: a lowercase letter first, then lowercase letters, digits and '-'. */
const ENVIRONMENT_NAME_PATTERN = "^[a-z][a-z0-9-]{0,30}$";

const EnvironmentName = (description: string) =>
  Type.String({ pattern: ENVIRONMENT_NAME_PATTERN, description });

/** Where plumb reads a setting at run time: an environment variable or a file, never git. */
const FromEnvOrFile = (what: string) =>
  Type.Union(
    [
      Type.Object(
        {
          env: Type.String({
            pattern: C_IDENTIFIER_PATTERN,
            description: `Environment variable holding the ${what}.`,
          }),
        },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          file: Type.String({
            minLength: 1,
            description: `File holding the ${what}, relative to this manifest (or absolute).`,
          }),
        },
        { additionalProperties: false },
      ),
    ],
    { description: `Where plumb reads the ${what}: {env: NAME} or {file: PATH}.` },
  );

const Setting = (what: string, description: string) =>
  Type.Union([Type.String({ minLength: 1, description: `The ${what} itself.` }), FromEnvOrFile(what)], {
    description,
  });

/**
 * The keys of a Deployment spec, each of any value: a partial spec that is checked only once it
 * is merged (the merged manifest is validated like any other, pointing at the value's source).
 */
const partialSpecOf = (keys: readonly string[], description: string) =>
  Type.Object(
    Object.fromEntries(
      keys.map((key): [string, TSchema] => [
        key,
        Type.Optional(
          Type.Unknown({
            description:
              key === "secrets"
                ? "Merged into spec.secrets by name: a secret of the same name is replaced, others are added."
                : `Merged into spec.${key} (JSON Merge Patch, RFC 7396).`,
          }),
        ),
      ]),
    ),
    { additionalProperties: false, description },
  );

export const ENVIRONMENT_SPEC_KEYS = [
  "source",
  "source_path",
  "source_config",
  "source_revision_config",
  "secrets",
  "secret_references",
  "revision_source",
  "verify",
] as const;

const Defaults = Type.Object(
  {
    labels: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Labels every deployment of this environment gets (its own labels win).",
      }),
    ),
    spec: Type.Optional(
      partialSpecOf(
        ENVIRONMENT_SPEC_KEYS,
        "A partial Deployment spec under every deployment of this environment: the deployment's spec and its override are merged over it.",
      ),
    ),
  },
  { additionalProperties: false, description: "What every deployment in this environment starts from." },
);

const Promotion = Type.Object(
  {
    from: EnvironmentName("The environment whose verified versions are promoted here."),
    gates: Type.Optional(
      Type.Object(
        {
          deployed: Type.Optional(
            Type.Boolean({
              description:
                "The source revision must be DEPLOYED and active, with no drift and no change pending (default true).",
            }),
          ),
          soak: Type.Optional(
            Type.String({
              pattern: "^\\d+(ms|s|m|h)$",
              description:
                "How long the source revision must have been DEPLOYED, by its control plane's clock, e.g. 30m.",
            }),
          ),
          checks: Type.Optional(
            Type.Object(
              {
                min_pass_ratio: Type.Optional(
                  Type.Number({ minimum: 0, maximum: 1, description: "Least share of checks that pass." }),
                ),
                max_latency_p95_ms: Type.Optional(
                  Type.Integer({ minimum: 1, description: "Largest 95th-percentile answer time, ms." }),
                ),
              },
              { additionalProperties: false, description: "The agent's checks on the source revision." },
            ),
          ),
        },
        {
          additionalProperties: false,
          description: "What must hold before plumb promote writes anything (deployed is on unless false).",
        },
      ),
    ),
    auto: Type.Optional(
      Type.Boolean({
        description:
          "The controller opens the promotion as a branch itself (plumb controller --promote-branch-prefix).",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Promotion into this environment: plumb promote --to NAME copies the versions that hold the gates in `from` into this environment's overrides.",
  },
);

const EnvironmentSpec = Type.Object(
  {
    api_url: Setting("control plane URL", "The control plane this environment deploys to."),
    api_key: FromEnvOrFile("API key"),
    tenant_id: Type.Optional(Setting("tenant id", "Tenant (workspace) id sent as X-Tenant-Id.")),
    mode: Type.Optional(
      Type.Union([Type.Literal("saas"), Type.Literal("self-hosted")], {
        description: "The installation's mode, for a control plane that does not report it.",
      }),
    ),
    platform_url: Type.Optional(Setting("platform API URL", "Platform API URL for organization settings.")),
    defaults: Type.Optional(Defaults),
    name_suffix: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z0-9-]{1,20}$",
        description:
          "Appended to every deployment name here (e.g. -staging), for environments sharing one control plane.",
      }),
    ),
    promotion: Type.Optional(Promotion),
  },
  { additionalProperties: false, description: "Where and how this environment's deployments run." },
);

export const EnvironmentManifest = Type.Object(
  {
    apiVersion: Type.Literal("plumb/v1", { description: "Always plumb/v1." }),
    kind: Type.Literal("Environment", {
      description: "A place deployments run: a control plane and defaults.",
    }),
    metadata: Type.Object(
      {
        name: EnvironmentName("Environment name (--env NAME): lowercase letters, digits and '-'."),
        labels: Type.Optional(
          Type.Record(Type.String(), Type.String(), { description: "Free-form labels." }),
        ),
      },
      { additionalProperties: false, description: "Identity of the environment." },
    ),
    spec: EnvironmentSpec,
  },
  { additionalProperties: false, title: "plumb Environment" },
);
export type EnvironmentManifest = Static<typeof EnvironmentManifest>;

/** metadata.environments of a Deployment: where it runs (absent: every environment). */
export const DeploymentEnvironments = Type.Array(EnvironmentName("An environment name."), {
  uniqueItems: true,
  minItems: 1,
  description: "The environments this deployment runs in; absent: every environment.",
});

/** The `environments:` map beside a Deployment's spec: what differs per environment. */
export const DeploymentOverrides = Type.Record(
  Type.String({ pattern: ENVIRONMENT_NAME_PATTERN }),
  Type.Object(
    {
      spec: Type.Optional(
        partialSpecOf(ENVIRONMENT_SPEC_KEYS, "Merged over spec in this environment (null removes a field)."),
      ),
    },
    { additionalProperties: false, description: "This environment's differences." },
  ),
  { additionalProperties: false, description: "Per-environment differences, by environment name." },
);
