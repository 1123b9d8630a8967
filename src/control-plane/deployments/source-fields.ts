import type { SourceConfig, SourceRevisionConfig } from "../../schema/deployment.js";
import { badRequest } from "../http/http-errors.js";

// Which fields of source_config and source_revision_config apply to which source: a field sent for
// a source it does not apply to is a 400 naming the sources it does apply to (docs/control-plane.md).

const SOURCE_CONFIG_APPLIES: Record<keyof SourceConfig, readonly string[]> = {
  integration_id: ["gitrepo"],
  repo_url: ["gitrepo"],
  deployment_type: ["gitrepo"],
  build_on_push: ["gitrepo"],
  custom_url: ["external_container"],
  resource_spec: ["external_container"],
  listener_id: ["external_container"],
  listener_config: ["external_container"],
  install_command: ["gitrepo", "internal_source"],
  build_command: ["gitrepo", "internal_source"],
};
export const REVISION_FIELD_APPLIES: Record<
  "repo_ref" | "graph_config_path" | "image_uri" | "source_tarball_path",
  readonly string[]
> = {
  repo_ref: ["gitrepo"],
  graph_config_path: ["gitrepo", "internal_source"],
  image_uri: ["external_container", "internal_container"],
  source_tarball_path: ["internal_source"],
};

const only = (list: readonly string[]) => list.join(" or ");
/** null and absent both mean the field was not sent. */
export const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

export function checkSourceConfigApplies(
  config: SourceConfig,
  source: string,
  skip: Array<keyof SourceConfig> = [],
) {
  for (const [field, sources] of Object.entries(SOURCE_CONFIG_APPLIES) as Array<
    [keyof SourceConfig, readonly string[]]
  >) {
    if (skip.includes(field) || !given(config[field]) || sources.includes(source)) continue;
    throw badRequest(`source_config.${field} does not apply to source ${source} (only to ${only(sources)})`);
  }
}

export function checkRevisionConfigApplies(config: Partial<SourceRevisionConfig>, source: string) {
  for (const [field, sources] of Object.entries(REVISION_FIELD_APPLIES)) {
    if (!given(config[field as keyof SourceRevisionConfig]) || sources.includes(source)) continue;
    throw badRequest(
      `source_revision_config.${field} does not apply to source ${source} (only to ${only(sources)})`,
    );
  }
}
