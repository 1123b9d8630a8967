import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { readApiOptions } from "../../api/config.js";
import { selectEnvironments } from "../../environment/select.js";
import { escapeControls, PlumbError } from "../../errors.js";
import { mayDefineEnvironments } from "../../manifest/environment-scan.js";
import { loadManifestsOnce } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import {
  readSavedPlanFor,
  savedPlanEnvironments,
  targetOf,
} from "../../reconcile/plan/saved-plan-environments.js";
import type { SessionIo } from "../../reconcile/session.js";
import { settingsOf } from "../environment-settings.js";
import type { EnvFlags } from "./env-flags.js";
import { inPromotionOrder } from "./promotion-order.js";
import { invalidProblems } from "./refuse-invalid.js";

// apply --plan FILE with environments: the saved plan's parts checked before any is applied.

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
