import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { targetsNowhere, targetText } from "../environment/targets-nowhere.js";
import { selectEnvironments } from "../environment/select.js";
import { escapeControls, isPlumbError } from "../errors.js";
import { loadManifestsOnce } from "../manifest/load.js";
import { type EnvironmentsOutput, environmentsOutput } from "../report/format-environments.js";
import { maxManifestBytesFrom } from "../manifest/parse/parse.js";
import type { SessionIo } from "../reconcile/session.js";
import { mayDefineEnvironments } from "../manifest/environment-scan.js";
import { allowedOriginsFrom } from "../api/allowed-origins.js";
import { pinnedUrlsOf, refuseSharedNames } from "./environment-settings.js";
import type { EnvFlags } from "./environments/env-flags.js";
import { runOne, runWithoutEnvironments } from "./environments/environment-run.js";
import { inPromotionOrder } from "./environments/promotion-order.js";
import { refuseInvalid } from "./environments/refuse-invalid.js";

export { environmentApiReader, settingsOf, withEnvironmentHint } from "./environment-settings.js";
export { checkSavedPlanParts } from "./environments/saved-plan-parts.js";
export { inPromotionOrder } from "./environments/promotion-order.js";

// `--env NAME` on plan and apply (docs/environments.md): the command runs once per environment,
// each with the API settings its Environment names, its own status store (.plumb/status/ENV/) and
// so its own state lock, its output under a heading (JSON: `environment` on the plan and each change).

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

/** apply stopped after `name`: which environments were not applied, and how to go on. */
function sayNotApplied(io: SessionIo, name: string, rest: readonly string[], how: string): void {
  if (rest.length === 0) return;
  io.stderr.write(
    `plumb: environment ${name} ${how}, so ${rest.join(", ")} ${rest.length === 1 ? "was" : "were"} not applied (nothing sent there); fix ${name} and apply again, or pass --keep-going to apply the others anyway\n`,
  );
}
