import type { Revision } from "../schema/revision.js";
import type { PromotionItem } from "./decide.js";
import type { TargetLive } from "./read-target.js";

// "Already at that version" judged on the target too (docs/environments.md, "Promotion"): a
// deployment whose override in git already names the source's version is `current` only when the
// target runs it — its active revision built from that repo_ref / graph_config_path / image_uri (an
// internal_source upload: the same digest in both environments' records). Otherwise it is `in-git`:
// nothing to write, and the report says what the target runs and to apply it. Pure.

const COMPARED = ["repo_ref", "graph_config_path", "image_uri"] as const;

const describe = (r: Revision) => `revision ${r.id} (${r.status})`;

/** Why the target does not run the source revision's version; null when it does. */
function notRunning(
  source: Revision,
  sourceDigest: string | null,
  live: TargetLive,
  to: string,
): string | null {
  if ("error" in live)
    return `${to} could not be read (${live.error}): whether it runs this version is unknown`;
  if (!live.deployment) return `in git, not deployed in ${to} yet: plumb apply --env ${to}`;
  const rollout = live.latest ? `; its latest is ${describe(live.latest)}` : "";
  if (!live.active) return `in git; ${to} has no active revision yet${rollout}`;
  for (const key of COMPARED) {
    const wanted = source.source_revision_config[key];
    const running = live.active.source_revision_config[key];
    if (typeof wanted === "string" && running !== wanted)
      return `in git; ${to} runs ${key} ${String(running ?? "(unset)")} (${describe(live.active)})${rollout}: plumb apply --env ${to}`;
  }
  if (sourceDigest !== null && live.digest !== sourceDigest)
    return `in git; ${to} runs source ${live.digest ?? "(none recorded)"}, not ${sourceDigest}${rollout}: plumb apply --env ${to}`;
  return null;
}

export function judgeLive(
  item: PromotionItem,
  source: { revision: Revision | null; sourceDigest: string | null },
  live: TargetLive | undefined,
  to: string,
): PromotionItem {
  if (item.outcome !== "current" || !source.revision || !live) return item;
  const reason = notRunning(source.revision, source.sourceDigest, live, to);
  return reason ? { ...item, outcome: "in-git", reasons: [reason] } : item;
}
