import { join } from "node:path";
import type { RevisionStatus } from "../schema/revision.js";
import type { PlanManifestsResult } from "./plan/plan-run.js";
import type { Session } from "./session.js";
import { refreshStatuses } from "./status-refresh.js";
import { readStateFile } from "../status/state-file.js";
import { ownRecordsIn, type RecordWriter } from "../git/status/status-source.js";
import { formatObjectStatus, MAX_RECORD_BYTES } from "../status/status-store.js";
import { type ObjectStatus, type StatusStore, statusFileName, statusKey } from "../status/status-types.js";

/**
 * Writes a record only when its file does not already hold exactly it: an unchanged record keeps
 * its time (refreshStatuses), so a run that observed nothing new touches no file. Comparing with
 * the file, not the loaded store, still writes a record known only from the status branch. A file
 * that a writer (an apply) replaced since the store was loaded is left as it is (saveObservedStatus);
 * a file git tracks there (a commit's) is not such a record, whatever it says (saveOwnObservedStatus).
 */
async function saveIfChanged(
  store: { dir: string; records: RecordWriter },
  record: ObjectStatus,
  base: ObjectStatus | undefined,
): Promise<void> {
  const file = join(store.dir, statusFileName(record.kind, record.name));
  const current = await readStateFile(file, MAX_RECORD_BYTES, "a record").catch(() => null);
  if (current !== formatObjectStatus(record))
    await store.records.saveOwnObservedStatus(record, base ? (base.seq ?? 0) : null);
}

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
  const written = { dir: session.statusDir, records: ownRecordsIn(session.statusDir) };
  for (const record of refreshed.records)
    await saveIfChanged(written, record, store.objects.get(statusKey(record.kind, record.name)));
  for (const gone of refreshed.removed) await written.records.removeOwnObservedStatus(gone);
  return refreshed.records;
}
