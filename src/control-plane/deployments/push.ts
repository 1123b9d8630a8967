import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Clock } from "../../clock.js";
import type { DeploymentRecord } from "./record.js";
import type { DeploymentStore } from "./store.js";

// Spec 3.2: "push to the tracked ref | build_on_push is true and repo_ref is a branch | new revision
// built". The hosted service hears of pushes from its git host; the local control plane has no git
// host, so a push is reported to it (docs/control-plane.md "Pushes to a gitrepo deployment's branch").

const PushBody = Type.Object(
  {
    repo_url: Type.String({
      minLength: 1,
      description: "Repository pushed to, as in source_config.repo_url.",
    }),
    ref: Type.String({
      minLength: 1,
      description: "Ref pushed: a bare branch name, refs/heads/NAME, or a tag refs/tags/NAME.",
    }),
    commit_sha: Type.Optional(
      Type.String({ pattern: "^[0-9a-f]{40}$", description: "Commit pushed; made up when absent." }),
    ),
  },
  { additionalProperties: false },
);
type PushBody = { repo_url: string; ref: string; commit_sha?: string };

export type PushRouteDeps = {
  store: DeploymentStore;
  clock: Clock;
  tenantOf(request: FastifyRequest): string;
  commit(): Promise<void>;
};

/** The branch a pushed ref names, or undefined for a tag (a tag is never tracked by build_on_push). */
function branchOf(ref: string): string | undefined {
  if (ref.startsWith("refs/tags/")) return undefined;
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
}

/** Does a push of `branch` to `repoUrl` build a new revision of this deployment? */
function tracksPush(record: DeploymentRecord, repoUrl: string, branch: string): boolean {
  const ref = record.sourceRevisionConfig.repo_ref;
  return (
    record.source === "gitrepo" &&
    record.deletedAt === undefined &&
    record.sourceConfig.build_on_push === true &&
    record.sourceConfig.repo_url === repoUrl &&
    typeof ref === "string" &&
    !ref.startsWith("refs/tags/") &&
    ref === branch
  );
}

export function registerPushRoute(app: FastifyInstance, deps: PushRouteDeps): void {
  app.post<{ Body: PushBody }>(
    "/v1/integrations/gitrepo/push",
    { schema: { body: PushBody } },
    async (request) => {
      const now = deps.clock.now();
      const branch = branchOf(request.body.ref);
      const built: Array<{ deployment_id: string; revision_id: string }> = [];
      if (branch !== undefined) {
        for (const record of deps.store.list(deps.tenantOf(request), now)) {
          if (!tracksPush(record, request.body.repo_url, branch)) continue;
          deps.store.buildOnPush(record, request.body.commit_sha, now);
          built.push({ deployment_id: record.id, revision_id: record.revisions.at(-1)?.id ?? "" });
        }
      }
      if (built.length > 0) await deps.commit();
      return { revisions: built };
    },
  );
}
