import { posix } from "node:path";
import { CPU_FIELDS } from "../schema/resource-spec.js";
import { needsCpuRounding, roundCpu } from "./cpu.js";
import type { FieldPath } from "./locate.js";
import { type ParsedDocument, problemAt } from "./parse.js";
import { formatField, suggest } from "./schema-check.js";
import type { Problem, Severity } from "./types.js";

// Business rules of spec sections 2.2-2.5 that a JSON Schema cannot express. They read the raw
// document defensively, so they run (and report) even when the schema check found other problems.

type Raw = Record<string, unknown>;
const isRecord = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);
const records = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const present = (v: unknown): boolean => v !== undefined && v !== null;

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
  const sections: Record<string, Raw> = { spec, source_config: sc, source_revision_config: src };
  const pathOf = (section: string, key: string): FieldPath =>
    section === "spec" ? ["spec", key] : ["spec", section, key];

  if (source) {
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
  checkSecrets(spec, doc.file, report);
  if (isRecord(sc.resource_spec)) checkResourceSpec(sc.resource_spec, report);
  return problems;
}

type Report = (
  severity: Severity,
  code: string,
  path: FieldPath,
  message: string,
  at?: "key" | "value",
) => void;

function checkSecrets(spec: Raw, file: string, report: Report): void {
  const seen = new Set<string>();
  const all = [
    ...records(spec.secrets).map((s, i) => ({ s, path: ["spec", "secrets", i] })),
    ...records(spec.secret_references).map((s, i) => ({ s, path: ["spec", "secret_references", i] })),
  ];
  for (const { s, path } of all) {
    if (typeof s.name !== "string") continue;
    if (seen.has(s.name)) {
      report(
        "error",
        "duplicate-secret",
        [...path, "name"],
        `secret ${s.name} is defined more than once`,
        "value",
      );
    }
    seen.add(s.name);
  }
  records(spec.secrets).forEach((secret, i) => {
    const path = ["spec", "secrets", i];
    const hasValue = typeof secret.value === "string" && secret.value !== "";
    const from = secret.valueFrom;
    if (hasValue && present(from)) {
      report(
        "error",
        "secret-value-conflict",
        [...path, "valueFrom"],
        "a secret takes value or valueFrom, not both",
      );
    } else if (!hasValue && !present(from)) {
      const message =
        secret.value === ""
          ? "secret value is empty; use valueFrom or a non-empty value"
          : "secret needs value or valueFrom";
      report("error", "secret-value-missing", secret.value === "" ? [...path, "value"] : path, message);
    }
    if (isRecord(from) && typeof from.file === "string") {
      const target = posix.normalize(posix.join(posix.dirname(file), from.file.replace(/\\/g, "/")));
      if (posix.isAbsolute(from.file) || target === ".." || target.startsWith("../")) {
        report(
          "error",
          "secret-file-outside-root",
          [...path, "valueFrom", "file"],
          `secret file ${from.file} is outside the manifest root`,
          "value",
        );
      }
    }
  });
}

function checkResourceSpec(rs: Raw, report: Report): void {
  const base = ["spec", "source_config", "resource_spec"];
  for (const key of CPU_FIELDS) {
    const value = rs[key];
    // Out-of-range values are already errors (bounds apply to the value as sent): no rounding advice.
    const bounded = !key.startsWith("db_");
    const inRange = !bounded || (value as number) >= 0.1;
    if (typeof value === "number" && inRange && needsCpuRounding(value)) {
      report(
        "warning",
        "cpu-rounded",
        [...base, key],
        `${key} ${value} has more than one decimal; the control plane rounds it to ${roundCpu(value)}`,
        "value",
      );
    }
  }
  const volumes = records(rs.volumes)
    .map((v) => v.name)
    .filter((n): n is string => typeof n === "string");
  volumes.forEach((name, i) => {
    if (volumes.indexOf(name) !== i) {
      report(
        "error",
        "duplicate-volume",
        [...base, "volumes", i, "name"],
        `volume ${name} is declared more than once`,
        "value",
      );
    }
  });
  const checkMounts = (mounts: unknown, path: FieldPath) =>
    records(mounts).forEach((mount, i) => {
      if (typeof mount.name === "string" && !volumes.includes(mount.name)) {
        report(
          "error",
          "unknown-volume",
          [...path, i, "name"],
          `volume mount names undeclared volume ${mount.name}${suggest(mount.name, volumes)}`,
          "value",
        );
      }
    });
  checkMounts(rs.volume_mounts, [...base, "volume_mounts"]);
  const containerNames = new Set<string>();
  for (const group of ["init_containers", "sidecars"] as const) {
    records(rs[group]).forEach((container, i) => {
      const path = [...base, group, i];
      checkMounts(container.volumeMounts, [...path, "volumeMounts"]);
      if (typeof container.name === "string") {
        if (containerNames.has(container.name)) {
          report(
            "error",
            "duplicate-container",
            [...path, "name"],
            `container ${container.name} is defined more than once`,
            "value",
          );
        }
        containerNames.add(container.name);
      }
      records(container.env).forEach((env, j) => {
        if (typeof env.value === "string" && env.value !== "" && present(env.valueFrom)) {
          report(
            "error",
            "env-value-conflict",
            [...path, "env", j, "valueFrom"],
            "an env var takes value or valueFrom, not both",
          );
        }
      });
    });
  }
}
