import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { ApiOptions } from "../api/config.js";
import { ApiError, type SettingHints, withSettingHints } from "../api/errors.js";
import type { LoadedEnvironment } from "../manifest/types.js";
import { loadManifests } from "../manifest/load.js";
import { maxManifestBytesFrom } from "../manifest/parse/parse.js";
import { onBranchWorktree } from "../git/branch-worktree.js";
import { gitAt, networkGit } from "../git/status/status-branch.js";
import type { GitStop } from "../git/stoppable-git.js";
import type { CheckoutQueue } from "../git/checkout-queue.js";
import { formatCommitMessage, type PromotionReport } from "./format-promotion.js";
import { promotionScope } from "./promotion-pairs.js";
import { type PromotionRun, runPromotion } from "./run-promotion.js";

// promotion.auto (docs/environments.md "Promotion"): the controller, after a drift check of an
// environment promoted automatically, runs the promotion itself and, when every gate holds and a
// version is to be promoted, opens it as branch BRANCH of its git source (rebuilt from the
// checked-out commit, force-pushed: the branch is plumb's, as --drift-branch's is) for review.
// A branch that already makes that change is not pushed again, however main moved since (its
// last commit's lines out and in are compared, not its tree), so each promotion is announced
// once. The source's records (its checks, its write-ahead intents) are read where they are
// authoritative: the status branch when one is set, else the status directory.

export type AutoPromotionDeps = {
  source: {
    repoRoot: string;
    manifestRoot: string;
    gitEnv: Record<string, string> | undefined;
    /** The controller's stop: the branch's fetch and push end with it (stoppable-git.ts). */
    gitStop?: GitStop | undefined;
    /** The checkout's git queue: the status branch's fetch and the branch's worktree take turns in it. */
    gitQueue: CheckoutQueue;
  };
  /** The environment promoted to, and the branch its promotions are opened on. */
  to: string;
  branch: string;
  /** Whether the environment promoted to still has promotion.auto (its Environment as followed now). */
  enabled?: () => boolean;
  /** The API settings of an environment (the controller's reader of Environment documents). */
  apiOf: (environment: LoadedEnvironment) => ApiOptions;
  /** Status directory of an environment's records. */
  statusDirOf: (environment: string) => string;
  /**
   * --status-branch: each environment's records are read from ENV/ on this branch of the git source
   * (the replica leading it publishes them there), merged with its status directory's.
   */
  statusBranch?: string | undefined;
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch | undefined;
};

export type OpenedPromotion = { report: PromotionReport; branch: string; commit: string };

const quiet = { write: () => true };

/** One environment's session settings: its API from its Environment, its records where authoritative. */
function sessionOf(deps: AutoPromotionDeps, environment: LoadedEnvironment): PromotionRun["source"] {
  const name = environment.manifest.metadata.name;
  const api = deps.apiOf(environment);
  return {
    flags: {
      apiUrl: api.apiUrl,
      platformUrl: api.platformUrl,
      ...(api.tenantId ? { tenantId: api.tenantId } : {}),
      ...(api.mode ? { mode: api.mode.mode } : {}),
      environment: name,
      statusDir: deps.statusDirOf(name),
      ...(deps.statusBranch
        ? {
            statusBranch: deps.statusBranch,
            gitEnv: deps.source.gitEnv,
            gitStop: deps.source.gitStop,
            gitQueue: deps.source.gitQueue,
          }
        : {}),
    },
    io: {
      stdout: quiet,
      stderr: quiet,
      env: { ...deps.env, PLUMB_API_KEY: api.apiKey },
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    },
  };
}

/**
 * An API error of an environment's reads with its hint naming that Environment's settings
 * (ApiOptions.settingHints, as the controller reads them), not PLUMB_API_KEY, which the session the
 * promotion runs in is given the key as.
 */
const explainOf =
  (deps: AutoPromotionDeps, environment: LoadedEnvironment) =>
  (error: unknown): unknown => {
    if (!(error instanceof ApiError)) return error;
    let hints: SettingHints | undefined;
    try {
      hints = deps.apiOf(environment).settingHints;
    } catch {
      return error; // its settings cannot be read: the error says so already
    }
    return hints ? withSettingHints(error, hints) : error;
  };

/** Runs the promotion; the opened branch, or null when nothing was opened (blocked, current, already open). */
export async function openPromotionBranch(deps: AutoPromotionDeps): Promise<OpenedPromotion | null> {
  const root = deps.source.manifestRoot;
  const tree = await loadManifests(root, { maxBytes: maxManifestBytesFrom(deps.env) });
  const scope = promotionScope(tree, deps.to, []);
  const { report, changes } = await runPromotion({
    root,
    scope,
    mode: "dry-run",
    source: sessionOf(deps, scope.from),
    target: () => sessionOf(deps, scope.to),
    explain: { source: explainOf(deps, scope.from), target: explainOf(deps, scope.to) },
  });
  if (!report.ok || changes.length === 0) return null;
  const git = (dir: string) => gitAt(deps.source.gitEnv, dir);
  const { repoRoot, gitEnv, gitQueue: queue } = deps.source;
  const on = { repoRoot, gitEnv, queue, branch: deps.branch, prefix: "plumb-promote-branch-" };
  return onBranchWorktree(on, async (worktree) => {
    const base = join(worktree, relative(deps.source.repoRoot, root));
    for (const change of changes) await writeFile(join(base, change.file), change.after);
    const tree = git(worktree);
    await tree.add(changes.map((c) => join(base, c.file)));
    const branchReport = { ...report, mode: "branch" as const, branch: deps.branch };
    await tree.raw([
      ...["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"],
      ...["commit", "--quiet", "-m", formatCommitMessage(branchReport)],
    ]);
    const network = networkGit(deps.source, worktree);
    if (await sameAsRemote(tree, network, deps.branch)) return null;
    await network(["push", "--quiet", "--force", "origin", `HEAD:refs/heads/${deps.branch}`]);
    const commit = (await tree.revparse(["HEAD"])).trim();
    return { report: { ...branchReport, commit }, branch: deps.branch, commit };
  });
}

/**
 * True when the remote's branch already makes this commit's change: the same lines taken out and
 * put in, in the same files, by its last commit. Its tree is not compared: every commit to main
 * since the branch was built (an unrelated file) made the trees differ, and the branch was
 * force-pushed and announced again after each one. A branch that holds the change is left on its
 * older base (merging it brings main's newer commits along), rebuilt only when the change differs.
 */
async function sameAsRemote(
  tree: ReturnType<typeof gitAt>,
  network: ReturnType<typeof networkGit>,
  branch: string,
): Promise<boolean> {
  const local = `refs/plumb/promotion/${branch}`;
  const fetched = await network(["fetch", "--quiet", "origin", `+refs/heads/${branch}:${local}`]).then(
    () => true,
    () => false, // no such branch yet
  );
  if (!fetched) return false;
  const [remote, mine] = await Promise.all([
    changeOf(tree, local).catch(() => undefined), // a branch of one root commit: not plumb's
    changeOf(tree, "HEAD"),
  ]);
  return remote === mine;
}

/** The lines a commit takes out and puts in, per file: its diff without positions or context. */
async function changeOf(tree: ReturnType<typeof gitAt>, commit: string): Promise<string> {
  const diff = await tree.raw(["diff", "--no-color", "--no-ext-diff", "-U0", `${commit}^`, commit]);
  return diff
    .split("\n")
    .filter((line) => /^(diff --git |[-+])/.test(line))
    .join("\n");
}
