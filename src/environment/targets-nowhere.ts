import { escapeControls, UsageError } from "../errors.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "../manifest/types.js";
import { resolveTree } from "./resolve-tree.js";

type Tree = {
  manifests: LoadedManifest[];
  environments?: LoadedEnvironment[] | undefined;
  problems: Problem[];
};

/**
 * The environments where none of --target's objects runs (metadata.environments leaves it out, or a
 * resolved name of another environment): skipped. They ran with nothing selected, drift saying "No
 * drift: 0 objects match git" of an environment it never looked at, plan failing with no-manifests
 * ("no plumb manifests under ."). Running in none of those selected is a usage error, said once.
 */
export function targetsNowhere(
  tree: Tree,
  environments: readonly LoadedEnvironment[],
  targets: readonly string[],
): Set<string> {
  if (targets.length === 0) return new Set();
  let unknown: UsageError | undefined;
  const none = environments
    .map((e) => e.manifest.metadata.name)
    .filter((name) => {
      try {
        return resolveTree(tree, name, targets).selected.length === 0;
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        unknown ??= error; // a name resolved in another environment only, or in none
        return true;
      }
    });
  if (none.length < environments.length) return new Set(none);
  throw (
    unknown ??
    new UsageError(
      `${targetText(targets)} ${targets.length === 1 ? "runs" : "run"} in none of the environments selected (${none.join(", ")})`,
    )
  );
}

export const targetText = (targets: readonly string[]) =>
  `--target ${targets.map(escapeControls).join(", ")}`;
