import { PlumbError } from "../../errors.js";
import { checkSavedPlan, readSavedPlanJson, type SavedPlan } from "./saved-plan.js";
import { savedEnvironmentsProblems } from "./saved-plan-shape.js";

// Saved plans of a repository with environments (docs/environments.md, "Saved plans"): one file
// holds each environment's plan as `plan --out` saves it without environments, with the
// environment's name and the control plane it was computed against (api_url and tenant_id as
// they resolved then). apply --plan applies each environment's part against that environment's
// control plane only: a part whose environment now resolves to another control plane (or tenant),
// a part missing, or a file of the other kind is refused as plan-environment-mismatch.

/** The control plane a plan was computed against. */
export type PlanTarget = { api_url: string; tenant_id: string | null };
type SavedEnvironmentPlan = SavedPlan & { environment: string; target: PlanTarget };
type SavedEnvironmentPlans = { format_version: "1"; environments: SavedEnvironmentPlan[] };

/** The target of an API client's settings. */
export const targetOf = (api: { apiUrl: string; tenantId?: string | undefined }): PlanTarget => ({
  api_url: api.apiUrl,
  tenant_id: api.tenantId ?? null,
});

/** The file's content for each environment's saved plan, in the order planned. */
export function buildSavedEnvironmentPlans(
  parts: ReadonlyArray<{ environment: string; target: PlanTarget; saved: SavedPlan }>,
): SavedEnvironmentPlans {
  return {
    format_version: "1",
    environments: parts.map((p) => ({ environment: p.environment, target: p.target, ...p.saved })),
  };
}

const mismatch = (message: string) =>
  new PlumbError("plan-environment-mismatch", `${message}; nothing was sent`, { exitCode: 1 });

const environmentsOf = (value: unknown): SavedEnvironmentPlan[] | undefined => {
  const list = (value as { environments?: unknown } | null)?.environments;
  return Array.isArray(list) ? (list as SavedEnvironmentPlan[]) : undefined;
};

/** The environments a saved plan holds, in its order; undefined for a plan made without environments. */
export async function savedPlanEnvironments(file: string): Promise<string[] | undefined> {
  const parts = environmentsOf(await readSavedPlanJson(file));
  return parts?.map((p) => String(p.environment));
}

/**
 * The saved plan apply --plan runs for `environment` (undefined: a repository without environments),
 * checked whole; `target` (read only for an environment) is where this run's client points.
 */
export async function readSavedPlanFor(
  file: string,
  environment: string | undefined,
  target: () => PlanTarget,
): Promise<SavedPlan> {
  const value = await readSavedPlanJson(file);
  const parts = environmentsOf(value);
  if (environment === undefined) {
    if (parts === undefined) return checkSavedPlan(file, value);
    throw mismatch(
      `${file} holds the plans of environments (${parts.map((p) => p.environment).join(", ")}), and PATH defines none: plan again with plumb plan --out`,
    );
  }
  if (parts === undefined)
    throw mismatch(
      `${file} was saved without environments, and PATH defines environments: plan again with plumb plan --out (it saves each environment's plan)`,
    );
  const problems = savedEnvironmentsProblems(value);
  if (problems.length > 0)
    throw new PlumbError(
      "plan-invalid",
      `${file} is not a saved plan as plumb wrote it (${problems.join("; ")}); was it edited? Run plumb plan --out again`,
      { exitCode: 1 },
    );
  const part = (value as SavedEnvironmentPlans).environments.find((p) => p.environment === environment);
  if (!part)
    throw mismatch(
      `${file} holds no plan of environment ${environment} (it holds ${parts.map((p) => p.environment).join(", ") || "none"}): plan it with plumb plan --env ${environment} --out, or apply --env the ones it holds`,
    );
  const now = target();
  if (now.api_url !== part.target.api_url || now.tenant_id !== part.target.tenant_id)
    throw mismatch(
      `environment ${environment}: the saved plan was computed against ${describe(part.target)}, and ${environment} now resolves to ${describe(now)}: plan again against this control plane with plumb plan --env ${environment} --out`,
    );
  const { environment: _name, target: _target, ...saved } = part;
  return checkSavedPlan(file, saved, ` (environment ${environment})`);
}

const describe = (t: PlanTarget) => `${t.api_url} (tenant ${t.tenant_id ?? "none given"})`;
