import type { FieldPath } from "../manifest/locate.js";
import type { ParsedDocument } from "../manifest/parse/parse.js";
import { checkDeploymentRules } from "../manifest/rules/rules.js";
import { checkSchema } from "../manifest/schema-check.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "../manifest/types.js";
import type { DeploymentManifest } from "../schema/manifest.js";
import { mergeLabels, mergeSpecs, type Spec } from "./merge-spec.js";
import { type Layer, originLocators } from "./origin.js";

// One environment's view of the manifests: the deployments that run there, each merged from the
// environment's defaults, its spec and its override (merge-spec.ts), validated again as a plain
// Deployment whose problems point at the layer that wrote the value (origin.ts). Pure.

type ResolvedEnvironment = {
  environment: string;
  manifests: LoadedManifest[];
  /** The name each resolved object has in its manifest (before the environment's name_suffix). */
  written: Map<LoadedManifest, string>;
  /**
   * The files of the Deployments that do not run here (metadata.environments leaves it out): for
   * this environment what they recorded is removed from git, not emptied (prune-plan.ts).
   */
  elsewhere: string[];
  problems: Problem[];
};

const layerOf = (spec: unknown, prefix: FieldPath, loaded: LoadedManifest | LoadedEnvironment): Layer => ({
  spec: (spec ?? {}) as Spec,
  prefix,
  key: (path) => loaded.locate(path),
  value: (path) => (loaded.locateValue ? loaded.locateValue(path) : loaded.locate(path)),
});

/** Whether a Deployment runs in `name` (metadata.environments absent: everywhere). */
const runsIn = (manifest: DeploymentManifest, name: string): boolean =>
  manifest.metadata.environments === undefined || manifest.metadata.environments.includes(name);

export function resolveEnvironment(
  manifests: readonly LoadedManifest[],
  environment: LoadedEnvironment,
): ResolvedEnvironment {
  const name = environment.manifest.metadata.name;
  const resolved: LoadedManifest[] = [];
  const problems: Problem[] = [];
  const written = new Map<LoadedManifest, string>();
  const elsewhere = new Set<string>();
  for (const loaded of manifests) {
    written.set(loaded, loaded.manifest.metadata.name);
    if (loaded.manifest.kind !== "Deployment") {
      resolved.push(loaded); // organization settings are the same in every environment
      continue;
    }
    const deployment = loaded as LoadedManifest<DeploymentManifest>;
    if (!runsIn(deployment.manifest, name)) {
      elsewhere.add(loaded.file);
      continue;
    }
    const one = resolveDeployment(deployment, environment);
    problems.push(...one.problems);
    if (one.problems.some((p) => p.severity === "error")) continue;
    resolved.push(one.loaded);
    written.set(one.loaded, loaded.manifest.metadata.name);
  }
  // A name_suffix cannot make two names equal: appending one suffix to distinct names keeps them distinct.
  return { environment: name, manifests: resolved, written, elsewhere: [...elsewhere], problems };
}

function resolveDeployment(
  loaded: LoadedManifest<DeploymentManifest>,
  environment: LoadedEnvironment,
): { loaded: LoadedManifest; problems: Problem[] } {
  const env = environment.manifest;
  const name = env.metadata.name;
  const { environments: overrides, metadata, ...document } = loaded.manifest;
  const layers = [
    layerOf(env.spec.defaults?.spec, ["spec", "defaults", "spec"], environment),
    layerOf(document.spec, ["spec"], loaded),
    layerOf(overrides?.[name]?.spec, ["environments", name, "spec"], loaded),
  ];
  const { spec, secretOrigins } = mergeSpecs(layers.map((l) => l.spec));
  const { environments: _runsIn, labels: ownLabels, ...identity } = metadata;
  const labels = mergeLabels(env.spec.defaults?.labels, ownLabels);
  const manifest = {
    apiVersion: document.apiVersion,
    kind: document.kind,
    metadata: {
      ...identity,
      name: `${identity.name}${env.spec.name_suffix ?? ""}`,
      ...(labels ? { labels } : {}),
    },
    spec,
  } as DeploymentManifest;
  const defaultLabel = (path: FieldPath) =>
    path[0] === "metadata" &&
    path[1] === "labels" &&
    typeof path[2] === "string" &&
    ownLabels?.[path[2]] === undefined &&
    env.spec.defaults?.labels?.[path[2]] !== undefined;
  const { key, value } = originLocators({
    layers,
    secretOrigins,
    metadata: (path, part) => {
      const from = defaultLabel(path) ? environment : loaded;
      const at = from === environment ? ["spec", "defaults", "labels", ...path.slice(2)] : path;
      return part === "value" && from.locateValue ? from.locateValue(at) : from.locate(at);
    },
  });
  const doc: ParsedDocument = {
    file: loaded.file,
    index: 0,
    value: manifest,
    locators: { key, value, start: loaded.location },
  };
  const problems = [...checkSchema(doc, "Deployment").problems, ...checkDeploymentRules(doc)].map((p) => ({
    ...p,
    message: `${p.message} (environment ${name})`,
  }));
  const resolved: LoadedManifest = {
    manifest,
    file: loaded.file,
    location: loaded.location,
    locate: key,
    locateValue: value,
  };
  return { loaded: resolved, problems };
}
