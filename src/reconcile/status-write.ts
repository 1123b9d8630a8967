import type { RevisionStatus } from "../schema/deployment.js";
import type { PlanManifestsResult } from "./plan-run.js";
import type { Session } from "./session.js";
import { refreshStatuses } from "./status-refresh.js";
import { removeObjectStatus, saveObjectStatus } from "./status-store.js";
import type { ObjectStatus, StatusStore } from "./status-types.js";

/**
 * Refreshes the store against live and writes it (what `drift` and `status` record): ids and
 * revisions from the listing, the latest revision read only where it is not the active one (the
 * rest need no request), sync from the plan. `store` narrows the records (drift --target).
 */
export async function writeRefreshedStatus(
  session: Session,
  result: Extract<PlanManifestsResult, { ok: true }> & { store?: StatusStore },
): Promise<ObjectStatus[]> {
  const store = result.store ?? session.store;
  const { ports } = session.connect();
  const latestStatuses = new Map<string, RevisionStatus>();
  const unfinished = result.live.deployments.filter(
    (d) =>
      d.latest_revision_id &&
      d.latest_revision_id !== d.active_revision_id &&
      store.objects.has(`Deployment/${d.name}`),
  );
  await Promise.all(
    unfinished.map(async (d) => {
      const revision = await ports.controlPlane.getRevision(d.id, d.latest_revision_id ?? "");
      if (revision) latestStatuses.set(d.id, revision.status);
    }),
  );
  const refreshed = refreshStatuses({
    plan: result.plan,
    store,
    live: result.live.deployments,
    latestStatuses,
    now: session.clock.now(),
  });
  for (const record of refreshed.records) await saveObjectStatus(session.statusDir, record);
  for (const gone of refreshed.removed) await removeObjectStatus(session.statusDir, gone.kind, gone.name);
  return refreshed.records;
}
