import type { DeploymentCreateRequest, SourceConfig } from "../../schema/deployment.js";
import { badRequest } from "../http/http-errors.js";
import { normalizeResourceSpec } from "../cpu.js";
import { checkRevisionConfigApplies, checkSourceConfigApplies, given } from "./source-fields.js";
import {
  checkListenerConfig,
  type CreatePlan,
  referencesSome,
  type RuleEnv,
  withoutIgnoredFields,
} from "./rules.js";

// The rules of a create (POST /v2/deployments) that depend on the installation (rules.ts).

function checkMode(source: string, env: RuleEnv) {
  if (source === "gitrepo" && env.mode === "self-hosted")
    throw badRequest("source gitrepo is only available on hosted (SaaS) installations");
  if (source === "external_container" && env.mode === "saas")
    throw badRequest("source external_container is only available on self-hosted installations");
}

function checkReferences(config: SourceConfig, env: RuleEnv) {
  if (given(config.integration_id) && !env.integrations.some((i) => i.id === config.integration_id))
    throw badRequest(
      `source_config.integration_id ${config.integration_id} is not a known integration; see GET /v1/integrations/gitrepo/install`,
    );
  if (given(config.listener_id) && !env.listeners.some((l) => l.id === config.listener_id))
    throw badRequest(
      `source_config.listener_id ${config.listener_id} is not a known listener; see GET /v2/listeners`,
    );
  checkListenerConfig(config.listener_config, config.listener_id, env);
}

const require = (value: unknown, field: string, source: string) => {
  if (!given(value)) throw badRequest(`${field} is required for source ${source}`);
};

export function planCreate(body: DeploymentCreateRequest, env: RuleEnv): CreatePlan {
  const { source } = body;
  checkMode(source, env);
  const config = withoutIgnoredFields(body.source_config, source);
  const revision = body.source_revision_config;
  if (source === "gitrepo" && given(config.custom_url))
    throw badRequest("source_config.custom_url is set by the server for source gitrepo and is read-only");
  checkSourceConfigApplies(config, source);
  checkRevisionConfigApplies(revision, source);
  if (referencesSome(body.secret_references) && source !== "external_container")
    throw badRequest(
      "secret_references does not apply to source " + source + " (only to external_container)",
    );
  if (source === "gitrepo") {
    require(config.integration_id, "source_config.integration_id", source);
    require(config.repo_url, "source_config.repo_url", source);
    require(revision.repo_ref, "source_revision_config.repo_ref", source);
  }
  if (source === "gitrepo" || source === "internal_source")
    require(revision.graph_config_path, "source_revision_config.graph_config_path", source);
  if (source === "external_container" || source === "internal_container")
    require(revision.image_uri, "source_revision_config.image_uri", source);
  if (source === "external_container") require(config.listener_id, "source_config.listener_id", source);
  if (given(revision.source_tarball_path))
    throw badRequest(
      "source_revision_config.source_tarball_path must come from POST /v2/deployments/{id}/upload-url; create the deployment first",
    );
  checkReferences(config, env);
  const stored: SourceConfig = { ...config };
  if (given(config.resource_spec)) stored.resource_spec = normalizeResourceSpec(config.resource_spec);
  return {
    sourceConfig: stored,
    sourceRevisionConfig: { ...revision },
    secretNames: body.secrets.map((s) => s.name),
    secretReferences: source === "external_container" ? (body.secret_references ?? null) : null,
  };
}
