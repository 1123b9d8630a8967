import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { targetsNowhere, targetText } from "../environment/targets-nowhere.js";
import { selectEnvironments } from "../environment/select.js";
import { escapeControls, isPlumbError, PlumbError } from "../errors.js";
import { environmentNamesAbove, type LoadResult, loadManifestsOnce } from "../manifest/load.js";
import { countProblems } from "../manifest/format/format.js";
import { sortProblems } from "../manifest/validate.js";
import { reportInvalidManifests } from "../report/report-invalid.js";
import { type EnvironmentsOutput, environmentsOutput } from "../report/format-environments.js";
import { environmentProblems } from "./offline/validate-environments.js";
import { maxManifestBytesFrom } from "../manifest/parse/parse.js";
import type { LoadedEnvironment, Problem } from "../manifest/types.js";
import type { SessionIo } from "../reconcile/session.js";
import { resolveStatusDir } from "../git/status/status-source.js";
import type { ConnectionFlags } from "./options.js";
import { mayDefineEnvironments } from "../manifest/environment-scan.js";
import { ApiConfigError, readApiOptions } from "../api/config.js";
import { allowedOriginsFrom } from "../api/allowed-origins.js";
import {
  readSavedPlanFor,
  savedPlanEnvironments,
  targetOf,
} from "../reconcile/plan/saved-plan-environments.js";
import { promotionOrder } from "../status-page/matrix-model.js";
import { pinnedUrlsOf, refuseSharedNames, settingsOf, withEnvironmentHint } from "./environment-settings.js";

export { environmentApiReader, settingsOf, withEnvironmentHint } from "./environment-settings.js";

// `--env NAME` on plan and apply (docs/environments.md): the command runs once per environment,
// each with the API settings its Environment names, its own status store (.plumb/status/ENV/) and
// so its own state lock, its output under a heading (JSON: `environment` on the plan and each change).

type EnvFlags = ConnectionFlags & {
  env?: string[];
  /** --target: an environment where none of these runs is skipped (said), not run. */
  target?: string[];
  mode?: string;
  output?: string;
  environment?: string;
  /** apply --keep-going: the environments after one that did not converge are applied anyway. */
  keepGoing?: boolean;
};

type EachOptions = {
  /** False for a command that talks to no API (unlock): the Environment's settings are not read. */
  connects?: boolean;
  /**
   * A command that only reads (plan, diff, drift, status): an environment whose run fails with a
   * PlumbError (its key not set, its control plane down or refusing the key) is reported on stderr
   * (JSON: `{environment, error}`) and the others still run; the command exits 1. Otherwise (apply,
   * adopt, import, and any run of one environment) the first such error ends the command.
   */
  eachAlone?: boolean;
  /**
   * apply: an environment that does not converge (its run exits non-zero or fails) stops the
   * command before the next one, which is said on stderr, unless flags.keepGoing.
   */
  stopOnFailure?: boolean;
};

/**
 * The selected environments in promotion order (as plumb status's matrix orders them): each chain
 * from its start, every environment right after the one it is promoted from, then the rest (and
 * any cycle) by name. --env selects; it does not reorder: staging is applied before prod.
 */
export function inPromotionOrder(environments: readonly LoadedEnvironment[]): LoadedEnvironment[] {
  const byName = new Map(environments.map((e) => [e.manifest.metadata.name, e]));
  const order = promotionOrder(
    environments.map((e) => ({
      name: e.manifest.metadata.name,
      promotion_from: e.manifest.spec.promotion?.from ?? null,
    })),
  );
  return order.map((name) => byName.get(name)!);
}

/** Runs `run` for each environment --env selects, or once as before when the tree defines none. */
export async function forEachEnvironment<F extends EnvFlags>(
  path: string,
  flags: F,
  io: SessionIo,
  run: (flags: F, io: SessionIo) => Promise<number>,
  options: EachOptions = {},
): Promise<number> {
  const { connects = true, eachAlone = false } = options;
  // Without --env, a tree that holds no Environment document is not loaded twice: a quick text scan
  // decides, unless the command shares its loads (plan), whose one parse answers it for free.
  if (
    !flags.env?.length &&
    !io.manifestLoads &&
    !(await mayDefineEnvironments(path, { above: true, maxBytes: maxManifestBytesFrom(io.env) }))
  )
    return runWithoutEnvironments(path, flags, io, run);
  // With plan's loads (io.manifestLoads) each environment's plan reuses this parse.
  const tree = await loadManifestsOnce(io.manifestLoads, path, {
    maxBytes: maxManifestBytesFrom(io.env),
    environmentsAbove: true,
    environmentRequested: Boolean(flags.env?.length),
  });
  // The manifests first (every selected environment's view): a broken one is reported, and nothing
  // sent, before any Environment's settings are read (an unset key hid it) or --env is judged (an
  // Environment document that failed validation is not among those defined).
  if (connects && (tree.environments?.length || flags.env?.length) && refuseInvalid(tree, flags, io))
    return 1;
  const environments = inPromotionOrder(selectEnvironments(tree.environments, flags.env ?? []));
  if (environments.length === 0) return runWithoutEnvironments(path, flags, io, run);
  const root = (await stat(path)).isDirectory() ? path : dirname(path);
  // With an allowlist, every selected environment's URLs are checked before the first one runs:
  // a refused one stops the command before anything is sent anywhere.
  if (connects && allowedOriginsFrom(flags, io.env))
    for (const environment of environments) pinnedUrlsOf(environment, root, io.env, flags);
  if (connects) refuseSharedNames(tree, root, io.env, flags);
  const output = environmentsOutput(flags.output, io.stdout);
  const skipped = targetsNowhere(tree, environments, flags.target ?? []);
  const failed: string[] = [];
  const stop = options.stopOnFailure && !flags.keepGoing && environments.length > 1;
  // --keep-going: apply's failed environment is reported as a read-only command's is.
  const alone = (eachAlone || (options.stopOnFailure && flags.keepGoing)) && environments.length > 1;
  let code = 0;
  for (const [index, environment] of environments.entries()) {
    const name = environment.manifest.metadata.name;
    const stdout = output.start(name);
    if (skipped.has(name)) {
      const targets = flags.target ?? [];
      output.skipped(
        name,
        `${targetText(targets)}: ${targets.length === 1 ? "it does" : "none does"} not run in ${name}`,
      );
      continue;
    }
    const rest = environments.slice(index + 1).map((e) => e.manifest.metadata.name);
    const result = await runOne(path, root, environment, flags, { ...io, stdout }, run, connects).catch(
      (error: unknown) => {
        if (!alone || !isPlumbError(error)) {
          if (stop) sayNotApplied(io, name, rest, "failed");
          endWithError(output, flags.output, environments.length, { name, error, rest: stop ? rest : [] });
          throw error;
        }
        // Settings errors name their environment already ("environment staging: spec.api_key ...").
        const said = error.message.startsWith(`environment ${name}:`) ? "" : `environment ${name}: `;
        io.stderr.write(`plumb: ${said}${escapeControls(error.message)} [${error.code}]\n`);
        failed.push(name);
        output.failed(name, error);
        return null;
      },
    );
    code = code === 1 || result === 1 || result === null ? 1 : Math.max(code, result);
    if (result !== null) output.ran(name);
    if (stop && result !== 0 && rest.length > 0) {
      output.notApplied(rest, name);
      output.end();
      sayNotApplied(io, name, rest, `did not converge (exit ${result})`);
      return code;
    }
  }
  output.end();
  if (failed.length > 0)
    io.stderr.write(
      `plumb: ${failed.length} of ${environments.length} environments failed (${failed.join(", ")}); the others ran\n`,
    );
  return code;
}

/**
 * A run as before environments. With no API URL set, the refusal names the environments above PATH
 * that --env could run it in: a directory of a repository with environments whose manifests name
 * none is not pulled into them without --env ("set PLUMB_API_URL" alone sent users elsewhere).
 */
async function runWithoutEnvironments<F extends EnvFlags>(
  path: string,
  flags: F,
  io: SessionIo,
  run: (flags: F, io: SessionIo) => Promise<number>,
): Promise<number> {
  return run(flags, io).catch(async (error: unknown) => {
    if (!(error instanceof ApiConfigError) || (flags.apiUrl ?? io.env.PLUMB_API_URL ?? "").trim() !== "")
      throw error;
    const names = await environmentNamesAbove(path, maxManifestBytesFrom(io.env));
    if (names.length === 0) throw error;
    throw new ApiConfigError(
      `${error.message}, or pass --env NAME to run in an environment defined above PATH (${names.join(", ")})`,
    );
  });
}

/**
 * The command ends with `failure.error` in environment `failure.name`: Markdown prints what the
 * environments wrote (bounded), with this error and those not applied; JSON over several
 * environments prints its document with them, as when apply stops on an exit code. It printed the error alone (main's
 * document), and the results of the environments applied before it were lost from stdout.
 */
function endWithError(
  output: EnvironmentsOutput,
  format: string | undefined,
  count: number,
  failure: { name: string; error: unknown; rest: readonly string[] },
): void {
  if (format === "json" && (count < 2 || !isPlumbError(failure.error))) return;
  if ((format === "json" || format === "markdown") && isPlumbError(failure.error)) {
    output.failed(failure.name, failure.error);
    output.notApplied(failure.rest, failure.name);
  }
  output.end();
}

/** The problems of the tree and of each environment --env selects (as validate finds them), when any is an error. */
function invalidProblems(tree: LoadResult, flags: EnvFlags): Problem[] | undefined {
  const problems = sortProblems([...tree.problems, ...environmentProblems(tree, flags.env ?? [])]);
  return countProblems(problems).errors > 0 ? problems : undefined;
}

/** Reports invalid manifests as each command's run would; true when there were errors. */
function refuseInvalid(tree: LoadResult, flags: EnvFlags, io: SessionIo): boolean {
  const problems = invalidProblems(tree, flags);
  if (!problems) return false;
  reportInvalidManifests(io.stdout, problems, flags.output ?? "text", "nothing was sent to any environment");
  return true;
}

/** apply stopped after `name`: which environments were not applied, and how to go on. */
function sayNotApplied(io: SessionIo, name: string, rest: readonly string[], how: string): void {
  if (rest.length === 0) return;
  io.stderr.write(
    `plumb: environment ${name} ${how}, so ${rest.join(", ")} ${rest.length === 1 ? "was" : "were"} not applied (nothing sent there); fix ${name} and apply again, or pass --keep-going to apply the others anyway\n`,
  );
}

/** One environment's run: its settings read, its flags and store, its API errors' hints its own. */
async function runOne<F extends EnvFlags>(
  path: string,
  root: string,
  environment: LoadedEnvironment,
  flags: F,
  io: SessionIo,
  run: (flags: F, io: SessionIo) => Promise<number>,
  connects: boolean,
): Promise<number> {
  const name = environment.manifest.metadata.name;
  const settings = connects ? settingsOf(environment, root, io.env, flags) : { flags: {}, env: io.env };
  const envFlags = {
    ...flags,
    ...settings.flags,
    environment: name,
    statusDir: join(resolveStatusDir({ root: path, statusDir: flags.statusDir }), name),
    // The default store's ENV/: the stores above and below are read too (docs/status.md).
    ...(flags.statusDir === undefined ? { statusDirOfEnvironment: true } : {}),
  };
  return run(envFlags, { ...io, env: settings.env }).catch((error: unknown) => {
    throw connects ? withEnvironmentHint(error, environment) : error;
  });
}

/**
 * apply --plan FILE with environments: each selected environment's part is read and the control
 * plane it was made against checked (readSavedPlanFor) before any environment is applied, so such
 * a refusal stops the whole apply, not only the environments after those already applied.
 */
export async function checkSavedPlanParts(
  path: string,
  flags: EnvFlags & { plan?: string | undefined },
  io: SessionIo,
): Promise<void> {
  if (
    flags.plan === undefined ||
    (!flags.env?.length &&
      !(await mayDefineEnvironments(path, { above: true, maxBytes: maxManifestBytesFrom(io.env) })))
  )
    return;
  const tree = await loadManifestsOnce(io.manifestLoads, path, {
    maxBytes: maxManifestBytesFrom(io.env),
    environmentsAbove: true,
    environmentRequested: Boolean(flags.env?.length),
  });
  // Invalid manifests: the apply reports them (forEachEnvironment) before any setting is read (an
  // Environment document that failed validation is among the names defined no longer).
  if (!tree.problems.some((p) => p.severity === "error"))
    await refuseUndefinedParts(flags.plan, tree.environments ?? [], flags.env ?? []);
  if (invalidProblems(tree, flags)) return;
  const root = (await stat(path)).isDirectory() ? path : dirname(path);
  for (const environment of inPromotionOrder(selectEnvironments(tree.environments, flags.env ?? []))) {
    const settings = settingsOf(environment, root, io.env, flags);
    const target = () => targetOf(readApiOptions(settings.env, settings.flags));
    await readSavedPlanFor(flags.plan, environment.manifest.metadata.name, target);
  }
}

/**
 * A part of the saved plan whose environment PATH no longer defines (renamed, removed): the file
 * names it, not --env. Without --env the names come from the file, and it was refused as a usage
 * error `unknown environment "prod" in --env`, of a flag the user never gave.
 */
async function refuseUndefinedParts(
  file: string,
  environments: readonly LoadedEnvironment[],
  requested: readonly string[],
): Promise<void> {
  const defined = environments.map((e) => e.manifest.metadata.name);
  const held = (await savedPlanEnvironments(file)) ?? [];
  const gone = requested.filter((name) => held.includes(name) && !defined.includes(name));
  if (gone.length === 0) return;
  const names = gone.map((name) => escapeControls(name)).join(", ");
  const which = gone.length === 1 ? `plan of environment ${names}` : `plans of environments ${names}`;
  throw new PlumbError(
    "plan-environment-mismatch",
    `${file} holds the ${which}, which PATH does not define (defined: ${defined.join(", ") || "none"}): plan again with plumb plan --out; nothing was sent`,
    { exitCode: 1 },
  );
}
