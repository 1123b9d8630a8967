import type { SecretRedactor } from "../../api/secret-redactor.js";
import { join, relative } from "node:path";
import { onBranchWorktree } from "../../git/branch-worktree.js";
import { gitAt, networkGit } from "../../git/status/status-branch.js";
import { PlumbError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { buildDriftReport } from "../../reconcile/drift.js";
import { planDriftEdits, writeDriftEdits } from "../../reconcile/drift-write.js";
import { loadEnvironmentWrite } from "../../reconcile/drift-write-environment.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { planManifests, type PlanManifestsOptions } from "../../reconcile/plan/plan-run.js";
import { type ObjectStatus, statusKey } from "../../status/status-types.js";
import type { ControllerOptions } from "../controller-types.js";
import { errorMessage } from "../error-message.js";
import type { ManifestSource } from "../source/manifest-source.js";

// controller --drift-branch NAME: after a drift check, the live values of drifted fields are
// written into the manifests (as drift --write does) on branch NAME of the git source, committed
// with the fields in the message and pushed, so a pull request can be opened from it. The branch
// is plumb's: it is rebuilt from the checked-out commit each time (force-pushed), in a worktree
// made in a turn of the checkout's git queue (git/branch-worktree.ts). With environments
// each environment writes its own branch, NAME/ENV, into the layer only it resolves (as drift
// --write --env does: drift-write-environment.ts).

export type DriftBranchDeps = {
  branch: string;
  source: Pick<ManifestSource, "repoRoot" | "manifestRoot" | "gitEnv" | "gitQueue" | "commit"> &
    Partial<Pick<ManifestSource, "gitStop">>;
  statuses: ReadonlyMap<string, ObjectStatus>;
  readers: Pick<Extract<PlanManifestsOptions, { controlPlane: unknown }>, "controlPlane" | "platform">;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /**
   * The controller's redactor: a live value holding a secret it knows is shown redacted and never
   * written to the branch (reconcile/plan/live-secrets.ts).
   */
  redactor?: SecretRedactor | undefined;
  /** With environments: this store's environment (its branch is NAME/ENV). */
  environment?: string | undefined;
};

/** --drift-branch writes git instead of healing live: it needs a git source and no --self-heal. */
export function checkDriftBranchOptions(
  options: Pick<ControllerOptions, "driftBranch" | "source" | "selfHeal">,
): void {
  if (options.driftBranch && (options.source.kind !== "git" || options.selfHeal))
    throw new PlumbError(
      "usage",
      "--drift-branch needs a git source (--repo) and no --self-heal: it writes live values back to git instead of healing them",
      { exitCode: 64 },
    );
}

/** Returns the written fields (empty when nothing drifted in a field plumb can write). */
export function createDriftBranchWriter(deps: DriftBranchDeps): () => Promise<string[]> {
  // The source's environment (askpass, GIT_CONFIG_* keeping credentials to their host) reaches the push.
  const git = (dir: string) => gitAt(deps.source.gitEnv, dir);
  const environment = deps.environment;
  const branch = environment === undefined ? deps.branch : `${deps.branch}/${environment}`;
  return async () => {
    const result = await planManifests({
      root: deps.source.manifestRoot,
      env: deps.env,
      ...deps.readers,
      recorded: (kind, name) => deps.statuses.get(statusKey(kind, name)),
      ...(deps.redactor ? { redactor: deps.redactor } : {}),
      ...(environment === undefined ? {} : { environment }),
    });
    if (!result.ok) {
      const problems = result.problems.filter((p) => p.severity === "error").length;
      deps.log.warn({ branch, problems }, "drift branch not written: the manifests did not plan");
      return [];
    }
    const report = buildDriftReport(
      result.plan,
      { objects: new Map(deps.statuses), problems: [] },
      result.live.deployments,
    );
    if (planDriftEdits(report).edits.size === 0) {
      deps.log.debug({ branch, drifted: report.items.length }, "drift branch not written: no field to write");
      return [];
    }
    const { repoRoot, gitEnv, gitQueue: queue } = deps.source;
    const on = { repoRoot, gitEnv, queue, branch };
    return onBranchWorktree({ ...on, prefix: "plumb-drift-branch-" }, async (worktree) => {
      const root = join(worktree, relative(deps.source.repoRoot, deps.source.manifestRoot));
      const layers =
        environment === undefined
          ? undefined
          : await loadEnvironmentWrite(root, environment, maxManifestBytesFrom(deps.env));
      const { written } = await writeDriftEdits(root, report, layers);
      if (written.length === 0) return [];
      const fields = written.map(
        (w) =>
          `${w.name} ${w.field}: ${JSON.stringify(w.from)} -> ${JSON.stringify(w.to)}${w.into ? ` (into ${w.into})` : ""}`,
      );
      const where = environment === undefined ? "" : ` in ${environment}`;
      const message = `plumb: write back drift found live${where}\n\n${fields.map((f) => `- ${f}`).join("\n")}\n\nBased on ${deps.source.commit() ?? "HEAD"}.`;
      const tree = git(worktree);
      await tree.add(["-A"]);
      await tree.raw([
        "-c",
        "user.name=plumb",
        "-c",
        "user.email=plumb@localhost",
        "commit",
        "--quiet",
        "-m",
        message,
      ]);
      // Over the network: in a process group the controller's stop ends (stoppable-git.ts).
      await networkGit(
        deps.source,
        worktree,
      )(["push", "--quiet", "--force", "origin", `HEAD:refs/heads/${branch}`]);
      deps.log.info({ branch, fields: fields.length }, "drift written back to a branch");
      return fields;
    }).catch((error: unknown) => {
      deps.log.error({ branch, err: errorMessage(error) }, "drift branch not written");
      return [];
    });
  };
}
