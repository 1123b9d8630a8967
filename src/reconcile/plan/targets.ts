import { distance } from "fastest-levenshtein";
import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import { UsageError } from "../../errors.js";
import type { LoadedManifest } from "../../manifest/types.js";
import type { Deployment } from "../../schema/deployment.js";

// `--target NAME`: which manifests to plan, and the cheapest way to read their live state.

/** Up to this many targeted deployments are looked up by name; more are read with one listing. */
const TARGET_LOOKUP_LIMIT = 10;

/** Names close to `name` (edit distance at most a third of its length, at least 2), closest first. */
export function closeNames(name: string, candidates: Iterable<string>, max = 3): string[] {
  const limit = Math.max(2, Math.floor(name.length / 3));
  return [...new Set(candidates)]
    .map((candidate) => ({ candidate, d: distance(name, candidate) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, max)
    .map(({ candidate }) => candidate);
}

/** The manifests named by `targets` (all when empty); an unknown name is an error suggesting close ones. */
export function selectTargets(manifests: LoadedManifest[], targets: readonly string[]): LoadedManifest[] {
  if (targets.length === 0) return manifests;
  const names = manifests.map((m) => m.manifest.metadata.name);
  const known = new Set(names);
  const unknown = [...new Set(targets.filter((t) => !known.has(t)))];
  if (unknown.length > 0) {
    const lines = unknown.map((target) => {
      const close = closeNames(target, names);
      const hint = close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(", ")}?` : "";
      return `--target "${target}" matches no manifest (metadata.name)${hint}`;
    });
    throw new UsageError(lines.join("\n"));
  }
  return manifests.filter((m) => targets.includes(m.manifest.metadata.name));
}

export type LiveReader = Pick<ControlPlaneClient, "listDeployments" | "findDeploymentByName">;

/**
 * The live deployments a plan needs: every one (one listing, 100 per page) unless only a few are
 * targeted, then each looked up by exact name (paging through `name_contains` matches).
 */
export async function readLiveDeployments(
  client: LiveReader,
  targeted: readonly string[] | undefined,
  options: { signal?: AbortSignal; lookupLimit?: number } = {},
): Promise<Deployment[]> {
  const call = options.signal ? { signal: options.signal } : {};
  const limit = options.lookupLimit ?? TARGET_LOOKUP_LIMIT;
  if (!targeted || targeted.length > limit) return client.listDeployments(call);
  const found = await Promise.all(
    [...new Set(targeted)].map((name) => client.findDeploymentByName(name, call)),
  );
  return found.filter((deployment): deployment is Deployment => deployment !== null);
}
