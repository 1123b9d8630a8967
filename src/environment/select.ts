import { escapeControls, UsageError } from "../errors.js";
import { suggest } from "../manifest/schema-check.js";
import type { LoadedEnvironment } from "../manifest/types.js";

/**
 * `--env NAME` (repeatable): the environments to run, in the order given; all when none is given.
 * `where`: where the Environment documents were looked for (the commands look above PATH too; the
 * controller reads its own root only), said when none is defined.
 */
export function selectEnvironments(
  environments: readonly LoadedEnvironment[] | undefined,
  requested: readonly string[],
  where = "under PATH, nor above it up to the root of its git repository",
): LoadedEnvironment[] {
  const defined = environments ?? [];
  if (requested.length === 0) return [...defined];
  if (defined.length === 0)
    throw new UsageError(
      `--env ${requested.map(escapeControls).join(", ")}: no kind: Environment document is defined ${where}; add one (docs/environments.md), or drop --env to run against PLUMB_API_URL (--api-url)`,
    );
  const byName = new Map(defined.map((e) => [e.manifest.metadata.name, e]));
  const unknown = requested.filter((name) => !byName.has(name));
  if (unknown.length > 0) {
    // Control characters escaped: the name is a command line's (a CI job's input), printed on stderr.
    const names = unknown.map((n) => `"${escapeControls(n)}"`).join(", ");
    const hint =
      unknown.length === 1
        ? // Names are lowercase (the schema's pattern): STAGING is matched as staging.
          listHint(unknown[0]!, byName) || suggest(unknown[0]!.toLowerCase(), [...byName.keys()])
        : "";
    throw new UsageError(
      `unknown environment ${names} in --env; defined: ${[...byName.keys()].join(", ")}${hint}`,
    );
  }
  return [...new Set(requested)].map((name) => byName.get(name)!);
}

/**
 * `--env staging,prod` (or with spaces: a CI input holding a list) naming only defined environments:
 * --env takes one name, repeated. It was "unknown environment" with no hint.
 */
function listHint(name: string, byName: ReadonlyMap<string, unknown>): string {
  const parts = name.split(/[\s,]+/).filter((part) => part !== "");
  if (parts.length < 2 || !parts.every((part) => byName.has(part))) return "";
  return ` (--env takes one name: pass ${parts.map((part) => `--env ${part}`).join(" ")})`;
}
