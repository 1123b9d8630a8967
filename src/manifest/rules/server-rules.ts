import type { DeploymentManifest } from "../../schema/manifest.js";
import type { LoadedManifest, Problem } from "../types.js";

/**
 * Create rules that depend on the installation, not on live objects: the sources its mode can
 * create (spec 2.1: gitrepo is SaaS only, external_container self-hosted only) and the
 * integrations and listeners it knows. Checked by plan for deployments it would create, so a
 * green plan does not fail on a 400 that could have been known.
 */

export type ServerFacts = {
  /** The installation's mode and where it was learnt; undefined when nothing says. */
  mode?: { mode: "saas" | "self-hosted"; from: string } | undefined;
  /** Known integration ids, when a create names one. */
  integrations?: ReadonlySet<string> | undefined;
  /** Known listener ids, when a create names one. */
  listeners?: ReadonlySet<string> | undefined;
};

const ONLY_ON: Record<string, "saas" | "self-hosted"> = {
  gitrepo: "saas",
  external_container: "self-hosted",
};

export function checkServerRules(
  creates: ReadonlyArray<LoadedManifest<DeploymentManifest>>,
  facts: ServerFacts,
): Problem[] {
  const problems: Problem[] = [];
  const report = (loaded: LoadedManifest, path: string[], code: string, message: string) =>
    problems.push({ ...loaded.locate(path), severity: "error", code, field: path.join("."), message });
  for (const loaded of creates) {
    const { spec } = loaded.manifest;
    const needs = ONLY_ON[spec.source];
    if (facts.mode !== undefined && needs !== undefined && facts.mode.mode !== needs) {
      report(
        loaded,
        ["spec", "source"],
        "source-not-in-mode",
        `source ${spec.source} is only available on ${needs === "saas" ? "hosted (SaaS)" : "self-hosted"} installations; this control plane is ${facts.mode.mode} (${facts.mode.from})`,
      );
    }
    const integration = spec.source_config?.integration_id;
    // Ids compared as the control plane stores them: lower case (an upper-case spelling is the same id).
    if (
      typeof integration === "string" &&
      facts.integrations &&
      !facts.integrations.has(integration.toLowerCase())
    ) {
      report(
        loaded,
        ["spec", "source_config", "integration_id"],
        "unknown-integration",
        `integration ${integration} is not one of this control plane's (${listed(facts.integrations)}; GET /v1/integrations/gitrepo/install)`,
      );
    }
    const listener = spec.source_config?.listener_id;
    if (typeof listener === "string" && facts.listeners && !facts.listeners.has(listener.toLowerCase())) {
      report(
        loaded,
        ["spec", "source_config", "listener_id"],
        "unknown-listener",
        `listener ${listener} is not one of this control plane's (${listed(facts.listeners)}; GET /v2/listeners)`,
      );
    }
  }
  return problems;
}

const listed = (ids: ReadonlySet<string>) =>
  ids.size === 0 ? "it has none" : `it has ${[...ids].join(", ")}`;
