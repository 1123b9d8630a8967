import type { DeploymentManifest } from "../schema/manifest.js";
import type { Spec } from "./merge-spec.js";
import { provides } from "./origin.js";

// drift --write in one environment (docs/drift.md, "With environments"): where a live value goes
// back in git so that this environment resolves it and no other environment's value changes. Pure.

type WriteBack = {
  /** The path in the Deployment document as written. */
  path: string[];
  /** `override`: environments.ENV.spec; `base`: the shared spec. */
  layer: "override" | "base";
};

/**
 * The override when it already sets the field, or when the base's value is shared with another
 * environment the deployment runs in that does not override it (or the value comes from the
 * Environment's defaults, which every deployment there shares); the base spec only when it sets
 * the field and every other environment of the deployment overrides it, so no other resolves it.
 */
export function writeBackTarget(
  deployment: DeploymentManifest,
  environment: string,
  defined: readonly string[],
  field: readonly string[],
): WriteBack {
  const overrideOf = (name: string): Spec => deployment.environments?.[name]?.spec ?? {};
  const override = { path: ["environments", environment, "spec", ...field], layer: "override" as const };
  if (provides(overrideOf(environment), field)) return override;
  const runsIn = deployment.metadata.environments ?? defined;
  const others = runsIn.filter((name) => name !== environment && defined.includes(name));
  const base = (deployment.spec ?? {}) as Spec;
  if (provides(base, field) && others.every((name) => provides(overrideOf(name), field)))
    return { path: ["spec", ...field], layer: "base" };
  return override;
}
