import type { FieldPath } from "../locate.js";
import { type ParsedDocument, problemAt } from "../parse/parse.js";
import { checkResourceSpec } from "./resource-spec-rules.js";
import { isRecord, leavesRoot, present, type Raw, type Report } from "./rule-helpers.js";
import { formatField } from "../schema-check.js";
import { checkSecretReuse, checkSecrets } from "./secret-rules.js";
import { urlHasCredentials } from "./environment/environment-rules.js";
import { tokenInUrl } from "../../url-tokens.js";
import { checkVerify } from "./verify-rules.js";
import type { Problem, Severity } from "../types.js";

// Business rules of spec sections 2.2-2.5 that a JSON Schema cannot express. They read the raw
// document defensively, so they run (and report) even when the schema check found other problems.

const GITREPO_ONLY = {
  source_config: ["integration_id", "repo_url", "deployment_type", "build_on_push"],
  source_revision_config: ["repo_ref"],
} as const;
const EXTERNAL_ONLY = {
  source_config: ["listener_id", "listener_config", "custom_url", "resource_spec"],
  spec: ["secret_references"],
} as const;
const JS_ONLY = ["install_command", "build_command"] as const;
const BUILDABLE = ["gitrepo", "internal_source"];

const pathOf = (section: string, key: string): FieldPath =>
  section === "spec" ? ["spec", key] : ["spec", section, key];

export function checkDeploymentRules(doc: ParsedDocument): Problem[] {
  const problems: Problem[] = [];
  const report = (
    severity: Severity,
    code: string,
    path: FieldPath,
    message: string,
    at: "key" | "value" = "key",
  ) => problems.push(problemAt(doc.locators[at](path), severity, code, formatField(path), message));

  const spec = isRecord(doc.value.spec) ? doc.value.spec : {};
  const source = typeof spec.source === "string" ? spec.source : undefined;
  const sc = isRecord(spec.source_config) ? spec.source_config : {};
  const src = isRecord(spec.source_revision_config) ? spec.source_revision_config : {};
  if (source) checkSourceFields(spec, source, report);
  checkSourcePath(spec, source, doc.file, report);
  if (present(src.source_tarball_path)) {
    report(
      "error",
      "source-tarball-path",
      pathOf("source_revision_config", "source_tarball_path"),
      "source_tarball_path is issued by the upload-url call at apply time; remove it from the manifest",
    );
  }
  if (
    sc.build_on_push === true &&
    typeof src.repo_ref === "string" &&
    src.repo_ref.startsWith("refs/tags/")
  ) {
    report(
      "error",
      "build-on-push-tag",
      pathOf("source_config", "build_on_push"),
      `build_on_push cannot be true when repo_ref is a tag (${src.repo_ref}); a tag never moves`,
    );
  }
  for (const key of ["repo_url", "custom_url"]) {
    const value = sc[key];
    const token = typeof value === "string" ? tokenInUrl(value) : undefined;
    if (urlHasCredentials(value) || token)
      report(
        "error",
        "url-credentials",
        pathOf("source_config", key),
        `source_config.${key} carries credentials (${token ?? "user:token@host"}), which git would keep and plan would print; remove them (the control plane reaches a repository through its git integration, integration_id)`,
        "value",
      );
  }
  checkSecrets(spec, doc.file, report);
  checkSecretReuse(doc.value, report);
  checkVerify(spec, report);
  if (isRecord(sc.resource_spec)) checkResourceSpec(sc.resource_spec, report);
  return problems;
}

/** Which fields apply to the deployment's source: gitrepo-only, external-only, buildable, JS-only. */
function checkSourceFields(spec: Raw, source: string, report: Report): void {
  const sc = isRecord(spec.source_config) ? spec.source_config : {};
  const src = isRecord(spec.source_revision_config) ? spec.source_revision_config : {};
  const sections: Record<string, Raw> = { spec, source_config: sc, source_revision_config: src };
  const only = (owner: string, groups: Record<string, readonly string[]>) => {
    for (const [section, keys] of Object.entries(groups)) {
      for (const key of keys.filter((k) => present(sections[section]?.[k]))) {
        report(
          "error",
          "field-not-applicable",
          pathOf(section, key),
          `${key} applies only to source ${owner}, not ${source}`,
        );
      }
    }
  };
  if (source !== "gitrepo") only("gitrepo", GITREPO_ONLY);
  if (source !== "external_container") only("external_container", EXTERNAL_ONLY);
  const buildable = BUILDABLE.includes(source);
  if (buildable && !present(src.graph_config_path)) {
    const path = isRecord(spec.source_revision_config)
      ? ["spec", "source_revision_config"]
      : ["spec", "source"];
    report(
      "error",
      "graph-config-path-required",
      path,
      `source ${source} needs source_revision_config.graph_config_path`,
    );
  }
  if (!buildable && present(src.graph_config_path)) {
    report(
      "error",
      "field-not-applicable",
      pathOf("source_revision_config", "graph_config_path"),
      `graph_config_path applies only to sources gitrepo and internal_source, not ${source}`,
    );
  }
  // revision_source may build one revision from a container image; judge image_uri by it.
  const revisionSource = typeof spec.revision_source === "string" ? spec.revision_source : source;
  if (BUILDABLE.includes(revisionSource) && present(src.image_uri)) {
    report(
      "error",
      "field-not-applicable",
      pathOf("source_revision_config", "image_uri"),
      `image_uri applies only to container sources, not ${revisionSource}`,
    );
  }
  for (const key of JS_ONLY.filter((k) => present(sc[k]) && !buildable)) {
    report(
      "warning",
      "js-only-field",
      pathOf("source_config", key),
      `${key} is used only when building JS deployments from source; it has no effect for ${source}`,
    );
  }
}

/** spec.source_path (plumb only): required for internal_source, refused elsewhere, inside the root. */
function checkSourcePath(spec: Raw, source: string | undefined, file: string, report: Report): void {
  const path = spec.source_path;
  if (source === "internal_source" && !present(path)) {
    report(
      "error",
      "source-path-required",
      ["spec", "source"],
      "source internal_source needs spec.source_path: the directory plumb packs and uploads at apply time",
    );
  }
  if (source !== undefined && source !== "internal_source" && present(path)) {
    report(
      "error",
      "field-not-applicable",
      ["spec", "source_path"],
      `source_path applies only to source internal_source, not ${source}`,
    );
  }
  if (typeof path === "string" && path !== "" && leavesRoot(file, path)) {
    report(
      "error",
      "source-path-outside-root",
      ["spec", "source_path"],
      `source_path ${path} is outside the manifest root`,
      "value",
    );
  }
}
