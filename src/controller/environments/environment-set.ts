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
} from "../../manifest/rules/environment/environment-names.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import type { Logger } from "../../logger.js";
import { definedTwice } from "./environment-roster.js";

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
  if (
    requested.length === 0 &&
    !(await mayDefineEnvironments(root, { maxBytes: maxManifestBytesFrom(options.env) }))
  )
    return undefined;
  const tree = await loadManifests(root, { maxBytes: maxManifestBytesFrom(options.env) });
  // One defined twice is not started (as one whose document is invalid): which is read first is no choice.
  const twice = definedTwice(tree.problems);
  const where = "under its root (the controller reads none above it)";
  // The tree's errors go with an unknown --env name: an invalid Environment document is not defined.
  const selected = selectEnvironments(tree.environments, requested, where, tree.problems).filter(
    (e) => !twice.has(e.manifest.metadata.name),
  );
  const problem = [...twice.values()][0];
  if (selected.length === 0 && problem)
    throw new PlumbError(
      "invalid-manifests",
      `${problem.file}:${problem.line}: ${problem.message}: the controller starts no environment defined twice; remove one`,
    );
  if (selected.length > 0 && options.environmentApi) refuseSharedNames(tree, root, options.environmentApi);
  return selected.length > 0 ? selected : undefined;
}

/**
 * Two environments whose settings resolve to one control plane and would both use one deployment
 * name there: the controller does not start (environment-name-collision), as plan and apply refuse
 * (src/cli/environment-settings.ts); reconciling both, it would undo each one's change with the other's
 * for ever. Checked on the tree it starts with, and again on each read of the tree while it runs
 * (collidingEnvironments: those environments are refused, the others run). An environment whose
 * settings cannot be read here is not compared.
 */
function refuseSharedNames(
  tree: LoadResult,
  root: string,
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions,
): void {
  const resolved = resolveEnvironments(tree.environments ?? [], root, environmentApi);
  const collision = resolvedNameCollision(resolved, deploymentsOfTree(tree.manifests));
  if (collision) throw new PlumbError("environment-name-collision", resolvedCollisionMessage(collision));
}

/** Each environment as its settings resolve here (the control plane it reaches); unreadable ones left out. */
function resolveEnvironments(
  environments: readonly LoadedEnvironment[],
  root: string,
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions,
): ResolvedEnvironment[] {
  return environments.flatMap((environment): ResolvedEnvironment[] => {
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
}

/**
 * The environments of `environments` that collide as refuseSharedNames refuses them (both of each
 * pair reaching one control plane with one deployment name), each with the message that says so.
 * The running controller refuses these (nothing sent to them) until git or the settings part them.
 */
function collidingEnvironments(
  environments: readonly LoadedEnvironment[],
  deployments: ReturnType<typeof deploymentsOfTree>,
  root: string,
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions,
): Map<string, string> {
  const resolved = resolveEnvironments(environments, root, environmentApi);
  const refused = new Map<string, string>();
  for (const [i, first] of resolved.entries())
    for (const second of resolved.slice(i + 1)) {
      const collision = resolvedNameCollision([first, second], deployments);
      if (!collision) continue;
      const message = resolvedCollisionMessage(collision);
      if (!refused.has(first.name)) refused.set(first.name, message);
      if (!refused.has(second.name)) refused.set(second.name, message);
    }
  return refused;
}

/**
 * Environments whose settings now reach one control plane with one deployment name (git or a
 * setting changed while running; at start the controller does not start): refused, as plan and
 * apply refuse them, until they part. Each one leading here drains (running reconciles finish)
 * and sends nothing more; its claim fails its check (its reason in /status and on the page) and
 * looks again each retry. Returns those newly refused: this change is not scanned by them.
 */
export function refuseCollisions(
  ctx: {
    roster: ReadonlyMap<string, LoadedEnvironment>;
    refused: Map<string, string>;
    claims: ReadonlyArray<{ name: string; restart(): void }>;
    log: Logger;
    environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions;
  },
  tree: LoadResult,
  root: string,
): string[] {
  const { log, roster } = ctx;
  const others = (tree.environments ?? []).filter((e) => !roster.has(e.manifest.metadata.name));
  const deployments = deploymentsOfTree(tree.manifests);
  const now = collidingEnvironments([...roster.values(), ...others], deployments, root, ctx.environmentApi);
  const refused = [...now.keys()].filter((name) => roster.has(name) && !ctx.refused.has(name));
  const parted = [...ctx.refused.keys()].filter((name) => !now.has(name));
  ctx.refused = new Map([...now].filter(([name]) => roster.has(name)));
  for (const name of refused) {
    log.error(
      { environment: name, reason: now.get(name) },
      "Environment refused: another environment reaches its control plane with the same deployment name; nothing is sent to it",
    );
    ctx.claims.find((c) => c.name === name)?.restart();
  }
  for (const name of parted) {
    log.info({ environment: name }, "Environment no longer collides with another: reconciling it");
    ctx.claims.find((c) => c.name === name)?.restart();
  }
  return refused;
}
