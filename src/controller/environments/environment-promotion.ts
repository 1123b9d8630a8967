import { join } from "node:path";
import type { ApiOptions } from "../../api/config.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import type { AutoPromotionDeps } from "../../promote/auto-promotion.js";
import type { ControllerStartOptions } from "../controller-types.js";
import type { ManifestSource } from "../source/manifest-source.js";

// promotion.auto with --promote-branch-prefix (docs/environments.md "Promotion"): what opens an
// environment's promotions as a branch of the git source. promotion.auto is read from the document
// followed now (turned on or off in git, it takes effect at the next drift check, with no restart),
// the source environment's API settings from the tree the promotion reads, and the source
// environment's records are read where they are authoritative: the status branch when
// --status-branch is set (whichever replica leads the source), else its status directory, which
// the replicas of one host share.

export function promotionOf(
  options: Pick<ControllerStartOptions, "promoteBranchPrefix" | "statusBranch" | "env" | "fetch">,
  context: {
    source: ManifestSource;
    base: string;
    environments: () => ReadonlyMap<string, LoadedEnvironment>;
    environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions;
  },
  name: string,
): AutoPromotionDeps | undefined {
  if (options.promoteBranchPrefix === undefined) return undefined;
  const { source } = context;
  return {
    source: {
      repoRoot: source.repoRoot,
      manifestRoot: source.manifestRoot,
      gitEnv: source.gitEnv,
      gitStop: source.gitStop,
      gitQueue: source.gitQueue,
    },
    to: name,
    branch: `${options.promoteBranchPrefix}${name}`,
    enabled: () => context.environments().get(name)?.manifest.spec.promotion?.auto === true,
    apiOf: (environment) => context.environmentApi(environment, source.manifestRoot),
    statusDirOf: (env) => join(context.base, env),
    statusBranch: options.statusBranch,
    env: options.env,
    fetch: options.fetch,
  };
}
