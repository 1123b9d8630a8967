import type { LoadedEnvironment, Problem } from "../../manifest/types.js";

// The environments a running controller follows, from each read of the tree (docs/environments.md
// "The controller"): an Environment added to git (and named by --env, when given) is started; one
// whose document is gone is stopped; one whose connection changed (api_url, api_key, tenant_id,
// mode, platform_url) is restarted; any other change (defaults, name_suffix, promotion) is only
// followed: its deployments are re-planned with it. A document that no longer validates is not a
// removal: while the file that held it reads with errors, the last valid document is kept, and the
// problem is reported; a second document of its name in another file, read first (duplicate-name,
// which validate refuses), does not take it over either. Nor is an emptied file (empty, only
// comments, a git-lfs pointer, a conflict marker; emptied-rules.ts), which is also what a save
// caught half written reads as: only a file
// that is gone, or that now holds other documents, removes its environment. Pure.

export type Roster = ReadonlyMap<string, LoadedEnvironment>;

export type RosterChange = {
  next: Map<string, LoadedEnvironment>;
  added: string[];
  removed: string[];
  /** Its connection changed: its client and store start again. */
  restarted: string[];
  /** Invalid in git: still run with the last valid document; the first error, as file:line: message. */
  invalid: Map<string, string>;
};

/** What a change of which makes its client and store start again. */
const connectionOf = (environment: LoadedEnvironment): string => {
  const { api_url, api_key, tenant_id, mode, platform_url } = environment.manifest.spec;
  return JSON.stringify([api_url, api_key, tenant_id ?? null, mode ?? null, platform_url ?? null]);
};

/** An error in the file, or the warning that it was emptied (not a removal; docs/environments.md). */
const keepsLastValid = (problem: Problem): boolean =>
  problem.severity === "error" || problem.code === "empty-file" || problem.code === "no-documents";

const problemIn = (tree: { problems: readonly Problem[] }, file: string) =>
  tree.problems.find((p) => p.file === file && keepsLastValid(p));

const DEFINED_AGAIN = /^environment ([a-z][a-z0-9-]*) is already defined at /;

/**
 * The names two Environment documents define (duplicate-name, which validate refuses and on which
 * plan and apply send nothing), each with that problem: which document is read first is no choice.
 */
export function definedTwice(problems: readonly Problem[]): Map<string, Problem> {
  const twice = new Map<string, Problem>();
  for (const problem of problems) {
    const name = problem.code === "duplicate-name" ? DEFINED_AGAIN.exec(problem.message)?.[1] : undefined;
    if (name !== undefined && !twice.has(name)) twice.set(name, problem);
  }
  return twice;
}

export function followEnvironments(
  known: Roster,
  tree: { environments?: readonly LoadedEnvironment[] | undefined; problems: readonly Problem[] },
  requested: readonly string[],
): RosterChange {
  const change: RosterChange = { next: new Map(), added: [], removed: [], restarted: [], invalid: new Map() };
  const wanted = (name: string) => requested.length === 0 || requested.includes(name);
  const twice = definedTwice(tree.problems);
  for (const environment of tree.environments ?? []) {
    const name = environment.manifest.metadata.name;
    if (!wanted(name)) continue;
    const before = known.get(name);
    // Defined twice, or now in another file while the one followed reads with errors: the followed
    // document stays (one defined twice from the start waits until it is defined once).
    const error =
      twice.get(name) ??
      (before && before.file !== environment.file ? problemIn(tree, before.file) : undefined);
    if (error) {
      if (before) change.next.set(name, before);
      if (before) change.invalid.set(name, `${error.file}:${error.line}: ${error.message}`);
      continue;
    }
    if (!before) change.added.push(name);
    else if (connectionOf(before) !== connectionOf(environment)) change.restarted.push(name);
    change.next.set(name, environment);
  }
  for (const [name, before] of known) {
    if (change.next.has(name)) continue;
    const error = problemIn(tree, before.file);
    if (!error) {
      change.removed.push(name);
      continue;
    }
    change.next.set(name, before);
    change.invalid.set(name, `${error.file}:${error.line}: ${error.message}`);
  }
  return change;
}
