import type { Logger } from "../../logger.js";
import {
  loadStatus,
  type RecordWriter,
  resolveStatusDir,
  type StatusLocation,
} from "../../git/status/status-source.js";
import { loadStatusStore } from "../../status/status-store.js";
import { type ObjectStatus, statusFileName } from "../../status/status-types.js";
import { trackedRecords } from "../../git/records/tracked-records.js";
import { errorMessage } from "../error-message.js";

// The status book's records in the older layout, moved beside the manifests (status-book.ts).

/**
 * The records of the older layout (a failure to read them is logged: they are then not moved). Its
 * directory is read as the current one is: a file git tracks there is the commit's, never a record
 * (tracked-records.ts), never written over; the record of its name is published from memory.
 */
export async function loadLegacy(
  location: StatusLocation,
  writer: RecordWriter,
  current: ReadonlyMap<string, ObjectStatus>,
  log: Logger,
): Promise<Map<string, ObjectStatus>> {
  const dir = resolveStatusDir(location);
  const tracked = await trackedRecords(dir).catch(() => undefined);
  const [store, local] = await Promise.all([
    loadStatus(location).catch((error: unknown) => {
      log.warn({ err: errorMessage(error) }, "status in the older layout not read");
      return null;
    }),
    tracked ? loadStatusStore(dir, tracked).catch(() => null) : null,
  ]);
  // Objects recorded in the new place already moved (a record there always wins).
  for (const key of current.keys()) store?.objects.delete(key);
  if (!store || store.objects.size === 0) return new Map<string, ObjectStatus>();
  log.info(
    { records: store.objects.size },
    "status found in the older layout: moving it beside the manifests",
  );
  // Its directory holds every record read (some came from the branch), so publishing it later
  // removes from the branch only the records that moved.
  for (const [key, record] of store.objects)
    if (!local?.objects.has(key) && !tracked?.has(statusFileName(record.kind, record.name)))
      await writer.saveOwnObjectStatus(record);
  return store.objects;
}
