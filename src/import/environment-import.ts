import type { JsonObject } from "../diff/values.js";
import type { BuiltManifest } from "./build-manifest.js";

// `plumb import --env NAME` (docs/import.md): what one environment's live deployments become in a
// repository with environments. A deployment the repository already defines is left to plan (its
// differences are plan --env NAME's to show, in the layer that wrote each value); any other is
// written as a new manifest that runs only there, named without the environment's name_suffix.
// Pure.

type Spec = Record<string, unknown>;

export type ImportEnvironment = {
  name: string;
  nameSuffix?: string | undefined;
  /** The spec fields the environment's defaults would set or change in `spec` (merged below it). */
  addedByDefaults: (spec: Spec) => string[];
};

/** A live deployment by its name there, built as import writes it without environments. */
export type LiveBuilt = { liveName: string; built: BuiltManifest };

export type EnvironmentImport = {
  /** Manifests to write, each with metadata.environments: [NAME] and its written name. */
  write: Array<{ name: string; liveName: string; built: BuiltManifest }>;
  /** Live deployments left alone, each with the reason. */
  skipped: Array<{ liveName: string; reason: string }>;
};

export function planEnvironmentImport(
  live: readonly LiveBuilt[],
  environment: ImportEnvironment,
  /** Deployments the repository defines: their name as written and where. */
  defined: ReadonlyMap<string, string>,
): EnvironmentImport {
  const suffix = environment.nameSuffix ?? "";
  const result: EnvironmentImport = { write: [], skipped: [] };
  for (const { liveName, built } of live) {
    if (!liveName.endsWith(suffix) || liveName.length === suffix.length) {
      result.skipped.push({
        liveName,
        reason: `its name lacks environment ${environment.name}'s name_suffix ${suffix}, so no manifest of ${environment.name} resolves to it`,
      });
      continue;
    }
    const name = liveName.slice(0, liveName.length - suffix.length);
    const at = defined.get(name);
    if (at !== undefined) {
      result.skipped.push({
        liveName,
        reason: `${name} is already defined at ${at}; plumb plan --env ${environment.name} shows how live differs`,
      });
      continue;
    }
    result.write.push({ name, liveName, built: inEnvironment(built, name, environment) });
  }
  return result;
}

/** The built manifest named `name`, running only in the environment, with a note where its defaults add to it. */
function inEnvironment(built: BuiltManifest, name: string, environment: ImportEnvironment): BuiltManifest {
  const manifest = built.manifest as { metadata: JsonObject; spec: Spec } & JsonObject;
  const spec = manifest.spec;
  const notes = [...built.notes];
  const added = environment.addedByDefaults(spec);
  if (added.length > 0)
    notes.push(
      `environment ${environment.name}'s defaults also set spec.${added.join(", spec.")}: plumb plan --env ${environment.name} shows what they change; override them under environments.${environment.name}.spec to keep live as it is`,
    );
  return {
    manifest: { ...manifest, metadata: { ...manifest.metadata, name, environments: [environment.name] } },
    notes,
  };
}
