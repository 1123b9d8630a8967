import { resolveTree } from "../environment/resolve-tree.js";
import { escapeControls, PlumbError, UsageError } from "../errors.js";
import { suggest } from "../manifest/schema-check.js";
import type { LoadResult } from "../manifest/load.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "../manifest/types.js";
import type { DeploymentManifest } from "../schema/manifest.js";
import type { Gates } from "./gates.js";

// What `plumb promote --to ENV` promotes: the deployments that run both in ENV and in the
// environment its `spec.promotion.from` names, each resolved in both (docs/environments.md). Pure.

export type PromotionPair = {
  /** metadata.name as written in the manifest (the override is keyed by it). */
  name: string;
  /** The manifest file, relative to PATH. */
  file: string;
  source: LoadedManifest<DeploymentManifest>;
  target: LoadedManifest<DeploymentManifest>;
};

export type PromotionScope = {
  from: LoadedEnvironment;
  to: LoadedEnvironment;
  gates: Gates | undefined;
  pairs: PromotionPair[];
};

const environmentNamed = (tree: LoadResult, name: string): LoadedEnvironment | undefined =>
  tree.environments?.find((e) => e.manifest.metadata.name === name);

const invalid = (problems: readonly Problem[], label: string) =>
  new PlumbError(
    "invalid-manifests",
    `${label}${problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`).join("; ")}; run plumb validate and fix them`,
  );

/**
 * The deployments of one environment, by the name written in their manifest. The tree's own
 * problems are not this environment's: only its resolution's are labelled with it.
 */
function deploymentsOf(tree: LoadResult, environment: string) {
  const resolved = resolveTree(tree, environment);
  const own = new Set(tree.problems);
  const problems = resolved.problems.filter((p) => p.severity === "error" && !own.has(p));
  if (problems.length > 0) throw invalid(problems, `environment ${environment}: `);
  const byName = new Map<string, LoadedManifest<DeploymentManifest>>();
  const written = new Map(
    tree.manifests.map((m) => [m.file + "\0" + m.location.line, m.manifest.metadata.name]),
  );
  for (const loaded of resolved.manifests) {
    if (loaded.manifest.kind !== "Deployment") continue;
    const name = written.get(loaded.file + "\0" + loaded.location.line) ?? loaded.manifest.metadata.name;
    byName.set(name, loaded as LoadedManifest<DeploymentManifest>);
  }
  return byName;
}

/** The promotion into `to`: its source environment, gates and the deployments both run. */
export function promotionScope(tree: LoadResult, to: string, targets: readonly string[]): PromotionScope {
  // A problem of the files themselves (an unknown field in prod's override) belongs to no one
  // environment: it was reported as the source environment's ("environment staging: ..."). It
  // comes first: an Environment document that failed validation is not among those defined, and
  // --to named it as "no such environment".
  const treeProblems = tree.problems.filter((p) => p.severity === "error");
  if (treeProblems.length > 0) throw invalid(treeProblems, "");
  const defined = tree.environments?.map((e) => e.manifest.metadata.name) ?? [];
  const target = environmentNamed(tree, to);
  if (!target)
    throw new UsageError(
      defined.length > 0
        ? `--to ${escapeControls(to)}: no such environment; defined: ${defined.join(", ")}${suggest(to, defined)}`
        : `--to ${escapeControls(to)}: no kind: Environment document is defined under PATH, nor above it up to the root of its git repository (docs/environments.md)`,
    );
  const promotion = target.manifest.spec.promotion;
  if (!promotion)
    throw new PlumbError(
      "promotion-not-configured",
      `environment ${to} (${target.file}:${target.location.line}) has no spec.promotion; add promotion: {from: ENV, gates: {...}} to it (docs/environments.md)`,
    );
  const from = environmentNamed(tree, promotion.from);
  if (!from)
    throw new UsageError(`environment ${to}: promotion.from names ${promotion.from}, which is not defined`);
  const sources = deploymentsOf(tree, from.manifest.metadata.name);
  const destinations = deploymentsOf(tree, to);
  const both = [...destinations.keys()].filter((name) => sources.has(name));
  const matches = (name: string, t: string) =>
    t === name ||
    t === sources.get(name)!.manifest.metadata.name ||
    t === destinations.get(name)!.manifest.metadata.name;
  const unknown = targets.filter((t) => !both.some((name) => matches(name, t)));
  if (unknown.length > 0)
    throw new UsageError(
      `--target ${unknown.map(escapeControls).join(", ")}: not a deployment of both ${from.manifest.metadata.name} and ${to}; check the name`,
    );
  const pairs = both
    .filter((name) => targets.length === 0 || targets.some((t) => matches(name, t)))
    .map((name) => ({
      name,
      file: destinations.get(name)!.file,
      source: sources.get(name)!,
      target: destinations.get(name)!,
    }));
  return { from, to: target, gates: promotion.gates, pairs };
}
