import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import type { DesiredObject, LiveState } from "../../diff/plan/build-plan.js";
import { redactPlan } from "../../diff/secrets/redact.js";
import type { Plan } from "../../diff/plan/plan-types.js";
import {
  fingerprintSecretsAsync,
  newSalt,
  type SecretFingerprints,
} from "../../diff/secrets/secret-fingerprint.js";
import { fileError, PlumbError } from "../../errors.js";
import type { Deployment } from "../../schema/deployment.js";
import { canonicalJson, manifestDigest } from "../../apply/status-record.js";
import { savedPlanProblems } from "./saved-plan-shape.js";

// Saved plans (`plan --out FILE`, `apply --plan FILE`), as Terraform's plan files: the reviewed
// plan plus what it was computed from, so apply can refuse when anything moved since. Per object:
// the manifest digest, the live version seen (updated_at, latest_revision_id, a digest of the live
// fields plan compares) and salted fingerprints of the secret values it would send, never values.

const SAVED_PLAN_VERSION = 1;

type LiveVersion = { id: string; updated_at: string; latest_revision_id: string | null; digest: string };
type SavedInputs = {
  kind: string;
  name: string;
  manifest_digest: string;
  live: LiveVersion | null;
  secrets: SecretFingerprints | null;
  source_digest: string | null;
};
export type SavedPlan = Plan & {
  saved: {
    version: number;
    created_at: string;
    targets: string[];
    /** Planned with --prune: apply --plan must say --prune too, and deletes exactly plan.prune's. */
    prune: boolean;
    /** Planned with --replace NAME ...: apply --plan must name the same deployments. */
    replace: string[];
    objects: SavedInputs[];
    organization: string | null;
  };
};

const sha256 = (value: unknown) =>
  `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;

/** What plan compares of a live deployment (secret values come back masked: names only). */
const liveDigest = (d: Deployment) =>
  sha256({
    source: d.source,
    source_config: d.source_config,
    source_revision_config: d.source_revision_config,
    secrets: d.secrets.map((s) => s.name),
    secret_references: d.secret_references ?? null,
  });

const liveVersionOf = (live: LiveState, name: string): LiveVersion | null => {
  const d = live.deployments.find((candidate) => candidate.name === name);
  return d
    ? { id: d.id, updated_at: d.updated_at, latest_revision_id: d.latest_revision_id, digest: liveDigest(d) }
    : null;
};

/**
 * The organization and its two settings. Its id too: with the settings alone, a plan applied where
 * the platform API is another organization's (another PLUMB_PLATFORM_URL or key) with the same
 * settings passed, and PATCHed an organization the reviewed plan never showed.
 */
const organizationDigest = (live: LiveState) =>
  live.organization
    ? sha256({
        id: live.organization.id,
        jit: live.organization.jit_provisioning_enabled,
        invites: live.organization.invites_enabled,
      })
    : null;

async function inputsOf(desired: DesiredObject, live: LiveState, salt?: string): Promise<SavedInputs> {
  const { manifest } = desired.loaded;
  const secrets = desired.secrets ?? [];
  return {
    kind: manifest.kind,
    name: manifest.metadata.name,
    manifest_digest: manifestDigest(manifest),
    live: manifest.kind === "Deployment" ? liveVersionOf(live, manifest.metadata.name) : null,
    secrets: secrets.length > 0 ? await fingerprintSecretsAsync(secrets, salt ?? newSalt()) : null,
    source_digest: desired.source?.digest ?? null,
  };
}

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

const key = (o: { kind: string; name: string }) => `${o.kind}/${o.name}`;
/** Each change's action and request as canonical JSON, by kind/name. */
const requestsOf = (plan: Plan) =>
  new Map(plan.changes.map((c) => [key(c), canonicalJson({ action: c.action, request: c.request })]));

/** Each object whose manifest, live version or secrets moved since the plan, with what moved; [] when none. */
export async function findStale(
  saved: SavedPlan,
  fresh: { plan: Plan; desired: readonly DesiredObject[]; live: LiveState },
): Promise<string[]> {
  const stale: string[] = [];
  const before = new Map(saved.saved.objects.map((o) => [key(o), o]));
  const requestsNow = requestsOf(redactPlan(fresh.plan));
  const requestsThen = requestsOf(saved);
  for (const desired of fresh.desired) {
    const k = `${desired.loaded.manifest.kind}/${desired.loaded.manifest.metadata.name}`;
    const old = before.get(k);
    before.delete(k);
    if (!old) {
      stale.push(`${k}: manifest added since the plan`);
      continue;
    }
    const now = await inputsOf(desired, fresh.live, old.secrets?.salt);
    const moved: string[] = [];
    if (now.manifest_digest !== old.manifest_digest) moved.push("manifest changed");
    if (canonicalJson(now.live) !== canonicalJson(old.live))
      moved.push(
        old.live === null
          ? "created live since the plan"
          : now.live === null
            ? "deleted live since the plan"
            : `live changed (updated_at ${old.live.updated_at} → ${now.live.updated_at})`,
      );
    const names = new Set([
      ...Object.keys(old.secrets?.values ?? {}),
      ...Object.keys(now.secrets?.values ?? {}),
    ]);
    for (const name of [...names].sort())
      if (old.secrets?.values[name] !== now.secrets?.values[name]) moved.push(`secret ${name} changed`);
    if (now.source_digest !== old.source_digest) moved.push("source_path content changed");
    if (moved.length === 0 && requestsNow.get(k) !== requestsThen.get(k))
      moved.push("planned request differs");
    if (moved.length > 0) stale.push(`${k}: ${moved.join(", ")}`);
  }
  for (const k of before.keys()) stale.push(`${k}: manifest removed since the plan`);
  if (canonicalJson(fresh.plan.prune ?? []) !== canonicalJson(saved.prune ?? []))
    stale.push("managed deployments removed from git (prune) differ from the plan");
  if (fresh.live.organization && organizationDigest(fresh.live) !== saved.saved.organization)
    stale.push(
      "OrganizationAccess: live organization settings changed, or the platform API is another organization's",
    );
  return stale;
}

/** A saved plan whose inputs moved is refused whole (plan-stale), before anything is sent. */
export async function refuseStalePlan(
  file: string,
  saved: SavedPlan,
  fresh: Parameters<typeof findStale>[1],
): Promise<void> {
  const stale = await findStale(saved, fresh);
  if (stale.length === 0) return;
  throw new PlumbError(
    "plan-stale",
    `the saved plan ${file} is stale; nothing was sent:\n${stale.map((s) => `  - ${s}`).join("\n")}\nRun plumb plan --out again and review the new plan.`,
    { exitCode: 1 },
  );
}
