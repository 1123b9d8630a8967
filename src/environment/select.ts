import { UsageError } from "../errors.js";
import type { LoadedEnvironment } from "../manifest/types.js";

/** `--env NAME` (repeatable): the environments to run, in the order given; all when none is given. */
export function selectEnvironments(
  environments: readonly LoadedEnvironment[] | undefined,
  requested: readonly string[],
): LoadedEnvironment[] {
  const defined = environments ?? [];
  if (requested.length === 0) return [...defined];
  if (defined.length === 0)
    throw new UsageError(
      `--env ${requested.join(", ")}: no kind: Environment document is defined under PATH; add one (docs/environments.md) or drop --env`,
    );
  const byName = new Map(defined.map((e) => [e.manifest.metadata.name, e]));
  const unknown = requested.filter((name) => !byName.has(name));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown environment ${unknown.map((n) => `"${n}"`).join(", ")} in --env; defined: ${[...byName.keys()].join(", ")}`,
    );
  return [...new Set(requested)].map((name) => byName.get(name)!);
}
