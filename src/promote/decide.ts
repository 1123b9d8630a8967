import type { Revision } from "../schema/revision.js";
import { evaluateGates, type GateResult, type Gates, type SourceFacts } from "./gates.js";
import { quoted, unpinnedReasons } from "./pin.js";
import { FAILED_REVISION_STATUSES } from "../schema/constants.js";
import type { PromotionPair } from "./promotion-pairs.js";
import type { SetEdit } from "../environment/set-values.js";

// One deployment's promotion decided (docs/environments.md, "Promotion"): the source revision's
// version compared with what the target environment resolves to in git, the pin rule and the
// gates. The version is the revision's SourceRevisionConfig (repo_ref, graph_config_path,
// image_uri) as the control plane built it; an internal_source deployment's version is the
// directory it packs (spec.source_path), whose content digest the source's status record holds.
// Pure.

type PromotedField = { field: string; from: unknown; to: string };

export type PromotionOutcome =
  | "promoted" // every gate holds; the fields are (or, in a dry run, would be) written
  | "current" // the target resolves to the source's version in git, and runs it (judge-live.ts)
  | "in-git" // the target resolves to it in git, and does not run it yet (not applied, or failed)
  | "blocked" // a gate fails
  | "unpinned"; // the source's version is a moving name (a branch, an untagged image)

export type PromotionItem = {
  name: string;
  file: string;
  outcome: PromotionOutcome;
  /** Why it is not promoted (unpinned, refused, each failed gate's detail). */
  reasons: string[];
  fields: PromotedField[];
  gates: GateResult[];
  evidence: {
    environment: string;
    deployment: string;
    revision_id: string | null;
    revision_status: string | null;
    deployed_at: string | null;
    repo_commit_sha: string | null;
    source_digest: string | null;
  };
  /** The YAML edits of the target's override (environments.TARGET.spec…). */
  edits: SetEdit[];
};

/** The revision fields a promotion copies; source_tarball_path belongs to the source's control plane. */
const COPIED = ["repo_ref", "graph_config_path", "image_uri"] as const;

type DecideInput = {
  pair: PromotionPair;
  from: string;
  to: string;
  gates: Gates | undefined;
  facts: SourceFacts;
  /** The source's recorded upload digest (internal_source), from its status record. */
  sourceDigest: string | null;
};

const revisionConfigOf = (spec: Record<string, unknown>): Record<string, unknown> => {
  const value = spec.source_revision_config;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
};

/** The fields whose value differs between the source revision and the target's resolved spec. */
function fieldsToCopy(pair: PromotionPair, revision: Revision): PromotedField[] | string {
  const sourceSpec = pair.source.manifest.spec as Record<string, unknown>;
  const targetSpec = pair.target.manifest.spec as Record<string, unknown>;
  if (sourceSpec.source !== targetSpec.source)
    return `the source is ${String(sourceSpec.source)} there and ${String(targetSpec.source)} here: promote only like for like`;
  const current = revisionConfigOf(targetSpec);
  const fields: PromotedField[] = [];
  for (const key of COPIED) {
    const value = revision.source_revision_config[key];
    if (typeof value === "string" && current[key] !== value)
      fields.push({ field: `source_revision_config.${key}`, from: current[key] ?? null, to: value });
  }
  if (sourceSpec.source === "internal_source" && typeof sourceSpec.source_path === "string") {
    if (targetSpec.source_path !== sourceSpec.source_path)
      fields.push({ field: "source_path", from: targetSpec.source_path ?? null, to: sourceSpec.source_path });
  }
  return fields;
}

/** Why a revision that failed in the source is not promoted, its status message quoted and cut. */
function failedThere(revision: Revision, from: string): string {
  const message = revision.status_message ? ` (${quoted(revision.status_message)})` : "";
  return `revision ${revision.id} is ${revision.status} in ${from}${message}: a version that failed there is never promoted, whatever the gates; fix it and apply ${from} again`;
}

export function decidePromotion(input: DecideInput): PromotionItem {
  const { pair, facts } = input;
  const revision = facts.revision;
  const gates = evaluateGates(input.gates, facts);
  const evidence = {
    environment: input.from,
    deployment: facts.deployment.name,
    revision_id: revision?.id ?? null,
    revision_status: revision?.status ?? null,
    deployed_at: revision?.status === "DEPLOYED" ? revision.updated_at : null,
    repo_commit_sha: revision?.source_revision_config.repo_commit_sha ?? null,
    source_digest: input.sourceDigest,
  };
  const item = (
    outcome: PromotionOutcome,
    reasons: string[],
    fields: PromotedField[] = [],
  ): PromotionItem => ({
    name: pair.name,
    file: pair.file,
    outcome,
    reasons,
    fields,
    gates,
    evidence,
    edits:
      outcome === "promoted"
        ? fields.map((f) => ({
            kind: "Deployment",
            name: pair.name,
            path: ["environments", input.to, "spec", ...f.field.split(".")],
            value: f.to,
          }))
        : [],
  });
  const failed = gates.filter((g) => !g.ok).map((g) => `${g.gate}: ${g.detail}`);
  if (!revision) return item("blocked", failed.length ? failed : ["no revision to promote"]);
  const fields = fieldsToCopy(pair, revision);
  if (typeof fields === "string") return item("blocked", [fields, ...failed]);
  if (fields.length === 0) return item("current", []);
  // Whatever the gates (deployed: false too): the source's control plane says this version failed.
  if (FAILED_REVISION_STATUSES.includes(revision.status))
    return item("blocked", [failedThere(revision, input.from), ...failed], fields);
  const unpinned = unpinnedReasons(revision.source_revision_config);
  if (unpinned.length > 0) return item("unpinned", [...unpinned, ...failed], fields);
  if (failed.length > 0) return item("blocked", failed, fields);
  return item("promoted", [], fields);
}
