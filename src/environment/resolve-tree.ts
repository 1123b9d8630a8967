import { escapeControls, UsageError } from "../errors.js";
import { suggest } from "../manifest/schema-check.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "../manifest/types.js";
import { resolveEnvironment } from "./resolve.js";

type EnvironmentTree = {
  manifests: LoadedManifest[];
  environments?: LoadedEnvironment[] | undefined;
  problems: Problem[];
};

type ResolvedTree = {
  /** Every object of the environment, resolved (what a deployment's secret files are taken from). */
  manifests: LoadedManifest[];
  /** Those of `targets` (every object when none), by the name written or the name resolved. */
  selected: LoadedManifest[];
  /** The files of Deployments that do not run in this environment (resolve.ts). */
  elsewhere: string[];
  problems: Problem[];
};

/** The environment named `name` of a loaded tree; an unknown name is a usage error. */
function environmentOf(tree: EnvironmentTree, name: string): LoadedEnvironment {
  const found = tree.environments?.find((e) => e.manifest.metadata.name === name);
  if (found) return found;
  const defined = tree.environments?.map((e) => e.manifest.metadata.name) ?? [];
  throw new UsageError(
    defined.length > 0
      ? `unknown environment "${escapeControls(name)}"; defined: ${defined.join(", ")}${suggest(name, defined)}`
      : `environment "${escapeControls(name)}": no kind: Environment document is defined under PATH, nor above it up to the root of its git repository (docs/environments.md)`,
  );
}

/** One environment's objects, resolved, with the tree's problems and the resolution's. */
export function resolveTree(
  tree: EnvironmentTree,
  name: string,
  targets: readonly string[] = [],
): ResolvedTree {
  const environment = environmentOf(tree, name);
  const written = new Set(tree.manifests.map((m) => m.manifest.metadata.name));
  const unknown = targets.filter((t) => !written.has(t));
  const resolved = resolveEnvironment(tree.manifests, environment);
  const resolvedNames = new Set(resolved.manifests.map((m) => m.manifest.metadata.name));
  const missing = unknown.filter((t) => !resolvedNames.has(t));
  if (missing.length > 0) {
    // As without environments: the closest name suggested (written or resolved), the value escaped.
    const names = [...new Set([...written, ...resolvedNames])];
    const hint = missing.length === 1 ? suggest(missing[0]!, names) : "";
    throw new UsageError(
      `--target ${missing.map(escapeControls).join(", ")}: no such object under PATH${hint}; check the name`,
    );
  }
  const wanted = new Set(targets);
  const selected =
    targets.length === 0
      ? resolved.manifests
      : resolved.manifests.filter(
          (m) => wanted.has(m.manifest.metadata.name) || wanted.has(resolved.written.get(m) ?? ""),
        );
  return {
    manifests: resolved.manifests,
    selected,
    elsewhere: resolved.elsewhere,
    problems: [...tree.problems, ...resolved.problems],
  };
}
