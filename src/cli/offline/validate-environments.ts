import { resolveTree } from "../../environment/resolve-tree.js";
import { selectEnvironments } from "../../environment/select.js";
import type { LoadResult } from "../../manifest/load.js";
import type { Problem } from "../../manifest/types.js";

/**
 * `validate --env`: the problems of each selected environment's merged deployments (a value an
 * override or an environment default makes invalid), beyond those of the files themselves.
 */
export function environmentProblems(loaded: LoadResult, requested: readonly string[]): Problem[] {
  const seen = new Set(loaded.problems);
  const found: Problem[] = [];
  // An Environment document that failed validation is not among those defined: --env naming it
  // said only "unknown environment". With errors in the files, every defined one is checked and
  // the files' problems say why.
  const defined = new Set(loaded.environments?.map((e) => e.manifest.metadata.name));
  const broken = loaded.problems.some((p) => p.severity === "error");
  const names = broken && requested.some((name) => !defined.has(name)) ? [] : requested;
  for (const environment of selectEnvironments(loaded.environments, names)) {
    const { problems } = resolveTree(loaded, environment.manifest.metadata.name);
    found.push(...problems.filter((p) => !seen.has(p)));
  }
  return found;
}
