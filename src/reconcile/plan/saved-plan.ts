import { readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import type { DesiredObject, LiveState } from "../../diff/plan/build-plan.js";
import { redactPlan } from "../../diff/secrets/redact.js";
import type { Plan } from "../../diff/plan/plan-types.js";
import { fileError, PlumbError } from "../../errors.js";
import { savedPlanProblems } from "./saved-plan-shape.js";
import {
  inputsOf,
  organizationDigest,
  SAVED_PLAN_VERSION,
  type SavedPlan,
} from "./saved-plan/saved-inputs.js";

export type { SavedPlan } from "./saved-plan/saved-inputs.js";
export { refuseStalePlan } from "./saved-plan/stale-plan.js";

// Saved plans (`plan --out FILE`, `apply --plan FILE`), as Terraform's plan files: the reviewed
// plan plus what it was computed from, so apply can refuse when anything moved since. Per object:
// the manifest digest, the live version seen (updated_at, latest_revision_id, a digest of the live
// fields plan compares) and salted fingerprints of the secret values it would send, never values.

/** The flags a plan was made with that change what apply does. */
export type PlanFlags = { targets: readonly string[]; prune: boolean; replace: readonly string[] };

/** The plan as saved: redacted like `--output json`, plus its inputs and the flags it was made with. */
export async function buildSavedPlan(
  plan: Plan,
  desired: readonly DesiredObject[],
  live: LiveState,
  flags: PlanFlags,
  now: number,
): Promise<SavedPlan> {
  return {
    ...redactPlan(plan),
    saved: {
      version: SAVED_PLAN_VERSION,
      created_at: new Date(now).toISOString(),
      targets: [...flags.targets],
      prune: flags.prune,
      replace: [...flags.replace].sort(),
      objects: await Promise.all(desired.map((d) => inputsOf(d, live))),
      organization: organizationDigest(live),
    },
  };
}

const usage = (message: string) => new PlumbError("usage", message, { exitCode: 64 });

/**
 * What apply --plan runs with: the saved plan's targets; its deletions (prune, replace) only when
 * the apply command says them again, as explicit consent to what the reviewed plan deletes.
 */
export function savedPlanFlags(saved: SavedPlan, given: PlanFlags): PlanFlags {
  if (given.targets.length > 0)
    throw usage("--target cannot be combined with --plan: the saved plan names its targets");
  if (given.prune !== saved.saved.prune)
    throw usage(
      saved.saved.prune
        ? "the saved plan was made with --prune: apply it with --prune"
        : "the saved plan was made without --prune: plan again with --prune --out to review the deletions",
    );
  if ([...given.replace].sort().join(" ") !== saved.saved.replace.join(" "))
    throw usage(
      saved.saved.replace.length > 0
        ? `the saved plan replaces ${saved.saved.replace.join(", ")}: apply it with the same --replace`
        : "the saved plan replaces nothing: plan again with --replace NAME --out to review the replacement",
    );
  return { targets: saved.saved.targets, prune: saved.saved.prune, replace: saved.saved.replace };
}

/** Written owner-only (0600), an existing file included: it holds salted fingerprints of secret values. */
export async function writeSavedPlan(file: string, saved: object): Promise<void> {
  const text = `${JSON.stringify(saved, null, 2)}\n`;
  await writeFileAtomic(file, text, { mode: 0o600 }).catch((error: unknown) => {
    throw fileError("plan-write-failed", file, error, "choose a writable --out path");
  });
}

export async function readSavedPlan(file: string): Promise<SavedPlan> {
  return checkSavedPlan(file, await readSavedPlanJson(file));
}

/** The file's JSON, unchecked (a saved plan of one run, or of environments: saved-plan-environments.ts). */
export async function readSavedPlanJson(file: string): Promise<unknown> {
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    throw fileError("plan-unreadable", file, error, "pass the file plumb plan --out wrote");
  });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PlumbError("plan-invalid", `${file} is not JSON: pass the file plumb plan --out wrote`, {
      exitCode: 1,
    });
  }
}

/** `value` as a saved plan of one run, checked whole; `where` names the part of the file (an environment). */
export function checkSavedPlan(file: string, value: unknown, where = ""): SavedPlan {
  const saved = value as SavedPlan;
  if (saved?.format_version !== "1" || saved.saved?.version !== SAVED_PLAN_VERSION)
    throw new PlumbError(
      "plan-invalid",
      `${file}${where} is not a saved plan of this plumb (format_version 1, saved.version ${SAVED_PLAN_VERSION}); run plumb plan --out again`,
      { exitCode: 1 },
    );
  const problems = savedPlanProblems(saved);
  if (problems.length > 0)
    throw new PlumbError(
      "plan-invalid",
      `${file}${where} is not a saved plan as plumb wrote it (${problems.join("; ")}); was it edited? Run plumb plan --out again`,
      { exitCode: 1 },
    );
  return saved;
}
