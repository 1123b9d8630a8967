import { selectEnvironments } from "../../environment/select.js";
import { mayDefineEnvironments } from "../../manifest/environment-scan.js";
import { loadManifests } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";

/**
 * The environments this controller starts with: those --env names (all when none); undefined when
 * the tree defines none (the controller runs as without environments). Later reads of the tree
 * follow them (environment-roster.ts). A cheap text scan first, so a tree without environments is
 * not loaded twice.
 */
export async function definedEnvironments(
  root: string,
  options: { environments?: readonly string[] | undefined; env: NodeJS.ProcessEnv },
): Promise<LoadedEnvironment[] | undefined> {
  const requested = options.environments ?? [];
  if (requested.length === 0 && !mayDefineEnvironments(root, { maxBytes: maxManifestBytesFrom(options.env) }))
    return undefined;
  const tree = await loadManifests(root, { maxBytes: maxManifestBytesFrom(options.env) });
  const selected = selectEnvironments(tree.environments, requested);
  return selected.length > 0 ? selected : undefined;
}
