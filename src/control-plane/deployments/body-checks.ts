import type { ValidationIssue } from "../http/validation-errors.js";

// Cross-field rules that a schema cannot express but that need no stored state (422, decisions.md).
// They read the raw body defensively: it may not match the schema when they run.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const issue = (loc: Array<string | number>, msg: string): ValidationIssue => ({
  loc: ["body", ...loc],
  msg: `Value error, ${msg}`,
  type: "value_error",
});

export function checkDeploymentBody(body: unknown): ValidationIssue[] {
  if (!isObj(body)) return [];
  const issues: ValidationIssue[] = [];
  const sourceConfig = isObj(body.source_config) ? body.source_config : {};
  const revisionConfig = isObj(body.source_revision_config) ? body.source_revision_config : {};
  const ref = revisionConfig.repo_ref;
  if (sourceConfig.build_on_push === true && typeof ref === "string" && ref.startsWith("refs/tags/")) {
    issues.push(
      issue(
        ["source_config", "build_on_push"],
        "build_on_push cannot be true when repo_ref is a tag (refs/tags/...)",
      ),
    );
  }
  duplicates(list(body.secrets), "name", ["secrets"], "secret name", issues);
  // spec 2.5: a reference's name is "the environment variable to fill", as a secret's is: two
  // values for one variable, in either list, leave which one the container sees to chance.
  const references = list(body.secret_references);
  duplicates(references, "name", ["secret_references"], "secret reference name", issues);
  const secretNames = new Set(list(body.secrets).map((s) => (isObj(s) ? s.name : undefined)));
  references.forEach((ref, i) => {
    if (isObj(ref) && typeof ref.name === "string" && secretNames.has(ref.name))
      issues.push(
        issue(
          ["secret_references", i, "name"],
          `"${ref.name}" is also the name of a secret in secrets: one environment variable, two values`,
        ),
      );
  });
  if (isObj(sourceConfig.resource_spec)) checkResourceSpec(sourceConfig.resource_spec, issues);
  return issues;
}

function checkResourceSpec(spec: Obj, issues: ValidationIssue[]) {
  const base = ["source_config", "resource_spec"];
  const volumes = list(spec.volumes);
  duplicates(volumes, "name", [...base, "volumes"], "volume name", issues);
  const declared = new Set(volumes.filter(isObj).map((v) => v.name));
  const checkMounts = (mounts: unknown, loc: Array<string | number>) =>
    list(mounts).forEach((mount, i) => {
      if (isObj(mount) && typeof mount.name === "string" && !declared.has(mount.name)) {
        issues.push(
          issue([...loc, i, "name"], `volume mount "${mount.name}" names no volume declared in volumes`),
        );
      }
    });
  checkMounts(spec.volume_mounts, [...base, "volume_mounts"]);
  // A pod's containers, init containers included, share one namespace of names (Kubernetes refuses
  // the pod otherwise), so a sidecar may not take an init container's name either.
  const initNames = new Set(list(spec.init_containers).map((c) => (isObj(c) ? c.name : undefined)));
  list(spec.sidecars).forEach((container, c) => {
    if (isObj(container) && typeof container.name === "string" && initNames.has(container.name))
      issues.push(
        issue(
          [...base, "sidecars", c, "name"],
          `container name "${container.name}" is also an init container's: a pod's containers need names of their own`,
        ),
      );
  });
  for (const field of ["init_containers", "sidecars"] as const) {
    const containers = list(spec[field]);
    duplicates(containers, "name", [...base, field], "container name", issues);
    containers.forEach((container, c) => {
      if (!isObj(container)) return;
      checkMounts(container.volumeMounts, [...base, field, c, "volumeMounts"]);
      list(container.env).forEach((env, e) => {
        if (isObj(env) && isObj(env.valueFrom) && typeof env.value === "string" && env.value !== "") {
          issues.push(
            issue(
              [...base, field, c, "env", e, "valueFrom"],
              "valueFrom cannot be used when value is not empty",
            ),
          );
        }
      });
    });
  }
}

function duplicates(
  items: unknown[],
  field: string,
  loc: Array<string | number>,
  what: string,
  issues: ValidationIssue[],
) {
  const seen = new Set<unknown>();
  items.forEach((item, i) => {
    if (!isObj(item) || typeof item[field] !== "string") return;
    if (seen.has(item[field]))
      issues.push(issue([...loc, i, field], `duplicate ${what} "${String(item[field])}"`));
    seen.add(item[field]);
  });
}
