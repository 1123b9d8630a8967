import { PlumbError } from "../errors.js";
import { escapeControls } from "../manifest/format/format.js";
import type { SessionFlags, SessionIo } from "../reconcile/session.js";
import { commitOnNewBranch } from "./commit-branch.js";
import { decidePromotion } from "./decide.js";
import { judgeLive } from "./judge-live.js";
import { buildFileChanges, type FileChange, writeFileChanges } from "./file-changes.js";
import { formatCommitMessage, type PromotionReport } from "./format-promotion.js";
import type { PromotionScope } from "./promotion-pairs.js";
import { readSource } from "./read-source.js";
import { readTarget, type TargetLive } from "./read-target.js";

// plumb promote's steps (docs/environments.md, "Promotion"): read the source environment, decide
// each deployment, read the target for those git already has at the source's version (current only
// when the target runs it, else in-git), and — only when every one is promoted, current or in-git — build the file
// changes and write them (--write) or commit them on a new branch (--branch). All or nothing:
// one blocked or unpinned deployment leaves every file as it was.

export type PromotionRun = {
  root: string;
  scope: PromotionScope;
  mode: PromotionReport["mode"];
  branch?: string | undefined;
  /** The source environment's session settings (its API client, its status store). */
  source: { flags: SessionFlags; io: SessionIo };
  /**
   * The target environment's, built when needed (whether it runs what git already names): a target
   * whose settings cannot be read leaves those deployments in-git, unknown whether running.
   */
  target: () => { flags: SessionFlags; io: SessionIo };
  /** An error of either environment's reads as said to the user (its hint naming that Environment). */
  explain?: { source: (error: unknown) => unknown; target: (error: unknown) => unknown };
};

export async function runPromotion(
  run: PromotionRun,
): Promise<{ report: PromotionReport; changes: FileChange[] }> {
  const { scope } = run;
  const from = scope.from.manifest.metadata.name;
  const to = scope.to.manifest.metadata.name;
  // Nothing runs in both: nothing to read from the source's control plane.
  if (scope.pairs.length === 0)
    return { report: { from, to, mode: run.mode, ok: true, items: [] }, changes: [] };
  const reads = await readSource(run.root, run.source.flags, run.source.io, scope.pairs).catch(
    (error: unknown) => {
      throw run.explain ? run.explain.source(error) : error;
    },
  );
  const decided = scope.pairs.map((pair) =>
    decidePromotion({ pair, from, to, gates: scope.gates, ...reads.get(pair.name)! }),
  );
  const inGit = new Map(
    scope.pairs
      .filter((_, i) => decided[i]!.outcome === "current")
      .map((p) => [p.name, p.target.manifest.metadata.name]),
  );
  const live =
    inGit.size > 0
      ? await readTarget(run.root, run.target, inGit, run.explain?.target)
      : new Map<string, TargetLive>();
  const items = decided.map((item) => {
    const read = reads.get(item.name)!;
    const source = { revision: read.facts.revision, sourceDigest: read.sourceDigest };
    return judgeLive(item, source, live.get(item.name), to);
  });
  const ok = items.every(
    (i) => i.outcome === "promoted" || i.outcome === "current" || i.outcome === "in-git",
  );
  const report: PromotionReport = { from, to, mode: run.mode, ok, items };
  if (!ok) return { report, changes: [] };
  const changes = await buildFileChanges(run.root, items);
  if (changes.length === 0 || run.mode === "dry-run") return { report, changes };
  if (run.mode === "write") await writeFileChanges(run.root, changes);
  else {
    const branch = run.branch!;
    const environments = [scope.from.file, scope.to.file];
    const commit = await commitOnNewBranch(
      run.root,
      branch,
      changes,
      formatCommitMessage(report),
      environments,
    );
    Object.assign(report, { branch, commit });
  }
  return { report, changes };
}

/** The error a refused promotion ends with (after its report): unpinned first, then blocked. */
export function refusal(report: PromotionReport): PlumbError {
  const unpinned = report.items.filter((i) => i.outcome === "unpinned");
  const blocked = report.items.filter((i) => i.outcome === "blocked");
  const list = (items: typeof unpinned) =>
    items.map((i) => `${i.name} (${escapeControls(i.reasons[0] ?? "")})`).join("; ");
  if (unpinned.length > 0)
    return new PlumbError(
      "promotion-unpinned",
      `nothing promoted: ${list(unpinned)}; pin the source in ${report.from} (a tag as refs/tags/NAME, a commit id or an image tag or digest), apply it there, then promote`,
    );
  return new PlumbError(
    "promotion-blocked",
    `nothing promoted: ${list(blocked)}; wait until the gates hold (or use --target to promote the others)`,
  );
}
