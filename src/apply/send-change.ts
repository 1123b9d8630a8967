import { ApiError } from "../api/errors.js";
import { backoffDelay } from "../clock.js";
import type { SendContext } from "./engine-types.js";
import { type PlannedChange, UPLOAD_PLACEHOLDER } from "../diff/plan/plan-types.js";
import { PlumbError } from "../errors.js";
import type { Deployment } from "../schema/deployment.js";
import type { ApplyPorts } from "./ports.js";
import { packChangeSource, uploadSource } from "./upload/upload-source.js";

/** What one sent change produced. `revisionId` is the revision this apply created, if any. */
export type SendResult = {
  deployment: Deployment | null;
  revisionId: string | null;
  /** True when the response was lost and the outcome was found out afterwards. */
  recovered: boolean;
  /** internal_source: the source uploaded and set by the accepted PATCH. */
  sourceUpload?: { digest: string; object_path: string };
};

const MAX_ATTEMPTS = 8;
/** Waits between attempts: full jitter under 200 ms, doubling, at most 5 s. */
const BACKOFF = { baseMs: 200, maxMs: 5_000 };

/** The server may have carried the request out: no response, or a 5xx. */
const isAmbiguous = (error: unknown): boolean =>
  error instanceof ApiError && (error.ambiguous || error.status === 0 || error.status >= 500);

const isRetryable = (error: unknown): boolean => error instanceof ApiError && error.status === 429;

async function backoff(ctx: SendContext, attempt: number, error: unknown): Promise<void> {
  const hinted = error instanceof ApiError ? error.retryAfterMs : undefined;
  await ctx.clock.sleep(hinted ?? backoffDelay(attempt, BACKOFF, ctx.random), ctx.signal);
}

/**
 * The platform answers a PATCH with the organization's settings (spec 4.3): one it accepted but did
 * not take (an organization whose settings are fixed) is a failure, not a converged change. Taken
 * as sent, apply said converged and recorded Synced, and each later plan, or the controller on
 * every pass, sent the same PATCH again.
 */
function refuseUnchangedSettings(sent: Record<string, unknown>, answered: Record<string, unknown>): void {
  const kept = Object.keys(sent).filter((key) => answered[key] !== sent[key]);
  if (kept.length === 0) return;
  const shown = kept.map(
    (key) => `${key} ${JSON.stringify(answered[key])} (sent ${JSON.stringify(sent[key])})`,
  );
  throw new PlumbError(
    "unexpected-response",
    `the platform accepted the PATCH of the organization's settings but answered ${shown.join(", ")}: the setting did not take. On a self-hosted installation only the default organization's SSO settings can change; check the organization's settings in the UI`,
  );
}

/**
 * Sends one planned request so that repeating it never does the work twice.
 * - create: the client's ambiguity-safe create (it looks the name up before creating again); an
 *   internal_source create then uploads its source and PATCHes source_tarball_path (one more revision:
 *   the upload URL needs the deployment's id).
 * - update: an upload first when the change carries one (upload-url and PUT may be repeated: only the
 *   object path in the PATCH matters), then one PATCH with every field of the change.
 * - PATCH: one attempt at a time; after an ambiguous failure, GET the deployment: a
 *   revision-creating PATCH took effect when `latest_revision_id` moved and the deployment holds
 *   the revision fields it sets (carriesRevisionFields), and is then not resent (a resend would
 *   create a second revision). In-place PATCHes carry absolute values, so resending is safe.
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
    const answered = await ports.platform.patchOrganization(request.body, opts);
    refuseUnchangedSettings(request.body, answered);
    return { deployment: null, revisionId: null, recovered: false };
  }
  // Packed before anything is sent: a source that changed since the plan stops the change untouched.
  const packed = change.upload ? await packChangeSource(change, ctx) : undefined;
  if (change.action === "create") {
    const created = await ports.deployments.createDeployment(request.body, opts);
    if (!packed) return { deployment: created, revisionId: created.latest_revision_id, recovered: false };
    ctx.onCreated?.(created);
    const uploaded = await uploadSource(ports, change, created.id, packed, ctx);
    const body = { source_revision_config: { source_tarball_path: uploaded.object_path } };
    const sent = await sendPatch(ports, change, created.id, body, true, created, ctx);
    return { ...sent, sourceUpload: uploaded };
  }
  const id = change.id;
  if (!id) throw new PlumbError("plan-invalid", `update of ${change.name} has no deployment id`);
  let baseline = before;
  if (change.new_revision && !baseline) baseline = await ports.deployments.getDeployment(id, opts);
  if (!packed) return sendPatch(ports, change, id, request.body, change.new_revision, baseline, ctx);
  const uploaded = await uploadSource(ports, change, id, packed, ctx);
  const body = withObjectPath(request.body, uploaded.object_path);
  const sent = await sendPatch(ports, change, id, body, true, baseline, ctx);
  return { ...sent, sourceUpload: uploaded };
}

/** The planned body with the issued object path in place of the placeholder. */
function withObjectPath(body: Record<string, unknown>, objectPath: string): Record<string, unknown> {
  const revision = body.source_revision_config as Record<string, unknown> | undefined;
  if (revision?.source_tarball_path !== UPLOAD_PLACEHOLDER)
    throw new PlumbError("plan-invalid", "the planned PATCH has no place for the uploaded source");
  return { ...body, source_revision_config: { ...revision, source_tarball_path: objectPath } };
}

/**
 * Whether the deployment as read now holds the revision fields the PATCH sets. latest_revision_id
 * also moves for a revision someone else made since the plan read the deployment (a push with
 * build_on_push, a change in the UI): when a field the PATCH sets says otherwise, the PATCH did not
 * land and is sent again. null leaves a field unchanged and a field the server does not show
 * proves nothing, so neither counts against it (a change of secrets only is judged by the move).
 */
function carriesRevisionFields(body: Record<string, unknown>, now: Deployment): boolean {
  const wanted = body.source_revision_config;
  if (typeof wanted !== "object" || wanted === null) return true;
  const live = now.source_revision_config as Record<string, unknown>;
  return Object.entries(wanted).every(
    ([field, value]) => value === null || !(field in live) || live[field] === value,
  );
}

async function sendPatch(
  ports: ApplyPorts,
  change: PlannedChange,
  id: string,
  body: Record<string, unknown>,
  newRevision: boolean,
  baseline: Deployment | null,
  ctx: SendContext,
): Promise<SendResult> {
  const opts = { signal: ctx.signal };
  let revisionBefore = baseline?.latest_revision_id ?? null;
  for (let attempt = 1; ; attempt++) {
    try {
      const patched = await ports.deployments.patchDeploymentOnce(id, body, opts);
      return {
        deployment: patched,
        revisionId: newRevision ? patched.latest_revision_id : null,
        recovered: attempt > 1,
      };
    } catch (error) {
      if (ctx.signal?.aborted || attempt >= MAX_ATTEMPTS) throw error;
      if (isAmbiguous(error)) {
        const now = await ports.deployments.getDeployment(id, opts);
        if (!now)
          throw new PlumbError("deployment-vanished", `deployment ${change.name} (${id}) no longer exists`);
        if (newRevision && now.latest_revision_id !== revisionBefore && carriesRevisionFields(body, now)) {
          return { deployment: now, revisionId: now.latest_revision_id, recovered: true };
        }
        // Not landed (or another writer's revision): the next failure is judged from here.
        revisionBefore = now.latest_revision_id;
      } else if (!isRetryable(error)) {
        throw error;
      }
      await backoff(ctx, attempt, error);
    }
  }
}
