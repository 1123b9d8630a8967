import { ApiError } from "../api/errors.js";
import type { Clock } from "../clock.js";
import type { PlannedChange } from "../diff/plan-types.js";
import { PlumbError } from "../errors.js";
import type { Deployment } from "../schema/deployment.js";
import type { ApplyPorts } from "./ports.js";

/** What one sent change produced. `revisionId` is the revision this apply created, if any. */
export type SendResult = {
  deployment: Deployment | null;
  revisionId: string | null;
  /** True when the response was lost and the outcome was found out afterwards. */
  recovered: boolean;
};

export type SendContext = { clock: Clock; random: () => number; signal?: AbortSignal | undefined };

const MAX_ATTEMPTS = 8;

/** The server may have carried the request out: no response, or a 5xx. */
export const isAmbiguous = (error: unknown): boolean =>
  error instanceof ApiError && (error.ambiguous || error.status === 0 || error.status >= 500);

const isRetryable = (error: unknown): boolean => error instanceof ApiError && error.status === 429;

async function backoff(ctx: SendContext, attempt: number, error: unknown): Promise<void> {
  const hinted = error instanceof ApiError ? error.retryAfterMs : undefined;
  const ceiling = Math.min(5_000, 100 * 2 ** attempt);
  await ctx.clock.sleep(hinted ?? Math.floor(ctx.random() * ceiling), ctx.signal);
}

/**
 * Sends one planned request so that repeating it never does the work twice.
 * - create: the client's ambiguity-safe create (it looks the name up before creating again).
 * - update: one PATCH attempt at a time; after an ambiguous failure, GET the deployment: a
 *   revision-creating PATCH took effect when `latest_revision_id` moved, and is then not resent
 *   (a resend would create a second revision). In-place PATCHes carry absolute values, so resending is safe.
 * - OrganizationAccess: the platform PATCH (absolute values, idempotent; the client retries it).
 */
export async function sendChange(
  ports: ApplyPorts,
  change: PlannedChange,
  before: Deployment | null,
  ctx: SendContext,
): Promise<SendResult> {
  const request = change.request;
  if (!request) return { deployment: before, revisionId: null, recovered: false };
  const opts = { signal: ctx.signal };
  if (change.kind === "OrganizationAccess") {
    if (!ports.platform)
      throw new PlumbError("no-platform-client", "OrganizationAccess needs the platform API");
    await ports.platform.patchOrganization(request.body, opts);
    return { deployment: null, revisionId: null, recovered: false };
  }
  if (change.action === "create") {
    const created = await ports.deployments.createDeployment(request.body, opts);
    return { deployment: created, revisionId: created.latest_revision_id, recovered: false };
  }
  const id = change.id;
  if (!id) throw new PlumbError("plan-invalid", `update of ${change.name} has no deployment id`);
  let baseline = before;
  if (change.new_revision && !baseline) baseline = await ports.deployments.getDeployment(id, opts);
  const revisionBefore = baseline?.latest_revision_id ?? null;
  for (let attempt = 1; ; attempt++) {
    try {
      const patched = await ports.deployments.patchDeploymentOnce(id, request.body, opts);
      return {
        deployment: patched,
        revisionId: change.new_revision ? patched.latest_revision_id : null,
        recovered: attempt > 1,
      };
    } catch (error) {
      if (ctx.signal?.aborted || attempt >= MAX_ATTEMPTS) throw error;
      if (isAmbiguous(error)) {
        const now = await ports.deployments.getDeployment(id, opts);
        if (!now)
          throw new PlumbError("deployment-vanished", `deployment ${change.name} (${id}) no longer exists`);
        if (change.new_revision && now.latest_revision_id !== revisionBefore) {
          return { deployment: now, revisionId: now.latest_revision_id, recovered: true };
        }
      } else if (!isRetryable(error)) {
        throw error;
      }
      await backoff(ctx, attempt, error);
    }
  }
}
