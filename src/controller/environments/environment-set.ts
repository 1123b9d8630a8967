import { selectEnvironments } from "../../environment/select.js";
import { mayDefineEnvironments } from "../../manifest/environment-scan.js";
import { type LoadResult, loadManifests } from "../../manifest/load.js";
import type { ApiOptions } from "../../api/config.js";
import { PlumbError } from "../../errors.js";
import {
  deploymentsOfTree,
  type ResolvedEnvironment,
  resolvedCollisionMessage,
  resolvedNameCollision,
} from "../../manifest/rules/environment-names.js";
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
  options: {
    environments?: readonly string[] | undefined;
    env: NodeJS.ProcessEnv;
    /** Each Environment's API settings (the controller's reader): to compare what they resolve to. */
    environmentApi?: ((environment: LoadedEnvironment, root: string) => ApiOptions) | undefined;
  },
): Promise<LoadedEnvironment[] | undefined> {
  const requested = options.environments ?? [];
  if (requested.length === 0 && !mayDefineEnvironments(root, { maxBytes: maxManifestBytesFrom(options.env) }))
    return undefined;
  const tree = await loadManifests(root, { maxBytes: maxManifestBytesFrom(options.env) });
  const selected = selectEnvironments(tree.environments, requested);
  if (selected.length > 0 && options.environmentApi) refuseSharedNames(tree, root, options.environmentApi);
  return selected.length > 0 ? selected : undefined;
}

/**
 * Two environments whose settings resolve to one control plane and would both use one deployment
 * name there: the controller does not start (environment-name-collision), as plan and apply refuse
 * (src/cli/environment-settings.ts); reconciling both, it would undo each one's change with the other's
 * for ever. Checked on the tree it starts with; an environment whose settings cannot be read here
 * is not compared.
 */
function refuseSharedNames(
  tree: LoadResult,
  root: string,
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions,
): void {
  const resolved = (tree.environments ?? []).flatMap((environment): ResolvedEnvironment[] => {
    try {
      const api = environmentApi(environment, root);
      const { name } = environment.manifest.metadata;
      const suffix = environment.manifest.spec.name_suffix ?? "";
      return [
        { name, suffix, url: api.apiUrl, key: api.apiKey, ...(api.tenantId ? { tenant: api.tenantId } : {}) },
      ];
    } catch {
      return [];
    }
  });
  const collision = resolvedNameCollision(resolved, deploymentsOfTree(tree.manifests));
  if (collision) throw new PlumbError("environment-name-collision", resolvedCollisionMessage(collision));
}
