import { existsSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { mergeSpecs } from "../../environment/merge-spec.js";
import { UsageError } from "../../errors.js";
import type { BuiltManifest } from "../../import/build-manifest.js";
import { planEnvironmentImport } from "../../import/environment-import.js";
import { environmentNamesAbove, type LoadResult, loadManifests } from "../../manifest/load.js";

// `plumb import --env NAME` (docs/import.md): the repository at --out is read for its
// Environment documents and the deployments it already defines; what is written runs only in NAME.
// A sub-directory of a repository runs with the Environment documents above it, as --env on any
// command's PATH reads them (docs/environments.md "A directory as PATH").
const ABOVE = { environmentsAbove: true, environmentRequested: true } as const;

type Built = { liveName: string; id: string; built: BuiltManifest };

/** The deployments of `built` to write into the repository at `out`, for environment `name`. */
export async function environmentImport(
  out: string,
  name: string,
  built: readonly Built[],
  stdout: { write(text: string): unknown },
): Promise<Array<Built & { name: string }>> {
  const tree = await loadManifests(out, ABOVE);
  const environment = tree.environments?.find((e) => e.manifest.metadata.name === name);
  if (!environment) throw new UsageError(`unknown environment "${name}" under ${out}`);
  const defined = new Map(
    tree.manifests
      .filter((m) => m.manifest.kind === "Deployment")
      .map((m) => [m.manifest.metadata.name, `${m.file}:${m.location.line}`] as const),
  );
  const defaults = environment.manifest.spec.defaults?.spec;
  const plan = planEnvironmentImport(
    built,
    {
      name,
      nameSuffix: environment.manifest.spec.name_suffix,
      addedByDefaults: (spec) => {
        if (!defaults) return [];
        const merged = mergeSpecs([defaults, spec]).spec;
        return Object.keys(merged).filter((key) => !isDeepStrictEqual(merged[key], spec[key]));
      },
    },
    defined,
  );
  for (const skipped of plan.skipped) stdout.write(`skipped ${skipped.liveName}: ${skipped.reason}\n`);
  return plan.write.map((w) => ({ ...built.find((b) => b.liveName === w.liveName)!, ...w }));
}

/**
 * The manifests already at `out`, with the Environment documents above it when an environment is
 * named (`above`: --env); undefined when there is no such directory or it cannot be read.
 */
export async function readRepository(
  out: string,
  maxBytes: number,
  above: boolean,
): Promise<LoadResult | undefined> {
  if (!existsSync(out)) return undefined;
  return loadManifests(out, above ? { ...ABOVE, maxBytes } : { maxBytes }).catch(() => undefined);
}

/**
 * Without --env, a tree that defines environments is refused: a manifest written without
 * metadata.environments would run in every environment, each control plane's deployment in all.
 * A directory below Environment documents (made or not yet) is imported as plan and apply treat it
 * without --env (against PLUMB_API_URL, not pulled into them), with a warning: an apply of the tree
 * above runs what is written in every environment (a repository keeping examples beside a plain
 * deployments/ folder, as README's quick tour does, is not refused).
 */
export async function refuseEnvironments(
  out: string,
  tree: LoadResult | undefined,
  maxBytes: number,
  stderr: { write(text: string): unknown },
): Promise<void> {
  const own = tree?.environments?.map((e) => e.manifest.metadata.name) ?? [];
  if (own.length > 0)
    throw new UsageError(
      `${out} defines environments (${own.join(", ")}): say whose control plane this is with --env NAME (docs/import.md)`,
    );
  const above = await environmentNamesAbove(out, maxBytes);
  if (above.length > 0)
    stderr.write(
      `plumb: warning: ${out} is below Environment documents (${above.join(", ")}): the manifests written name no environment, so an apply of the tree above runs them in every one; to import one environment's deployments for it alone, pass --env NAME (docs/import.md)\n`,
    );
}
