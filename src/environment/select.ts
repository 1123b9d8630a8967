import { escapeControls, PlumbError, UsageError } from "../errors.js";
import { suggest } from "../manifest/schema-check.js";
import type { LoadedEnvironment, Problem } from "../manifest/types.js";

/**
 * `--env NAME` (repeatable): the environments to run, in the order given; all when none is given.
 * `where`: where the Environment documents were looked for (the commands look above PATH too; the
 * controller reads its own root only), said when none is defined. `problems`: the tree's, when the
 * caller has not refused its errors already (the controller).
 */
export function selectEnvironments(
  environments: readonly LoadedEnvironment[] | undefined,
  requested: readonly string[],
  where = "under PATH, nor above it up to the root of its git repository",
  problems: readonly Problem[] = [],
): LoadedEnvironment[] {
  const defined = environments ?? [];
  if (requested.length === 0) return [...defined];
  refuseHiddenByErrors(defined, requested, problems);
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

/**
 * A name not among those defined while the tree has errors: an Environment document that fails
 * validation (a literal api_key, a YAML error) is not defined, so `controller --env prod` said only
 * `unknown environment "prod" in --env; defined: staging` (exit 64) and hid why. The errors first.
 */
function refuseHiddenByErrors(
  defined: readonly LoadedEnvironment[],
  requested: readonly string[],
  problems: readonly Problem[],
): void {
  const names = new Set(defined.map((e) => e.manifest.metadata.name));
  const unknown = requested.filter((name) => !names.has(name));
  const errors = problems.filter((p) => p.severity === "error");
  if (unknown.length === 0 || errors.length === 0) return;
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
  throw new PlumbError(
    "invalid-manifests",
    `${first.file}:${first.line}:${first.column}: ${escapeControls(first.message)} [${first.code}]${more}; --env ${unknown.map((n) => `"${escapeControls(n)}"`).join(", ")} is not among the environments defined (${[...names].join(", ") || "none"}) while the manifests have errors: run plumb validate and fix them`,
    { exitCode: 1 },
  );
}
