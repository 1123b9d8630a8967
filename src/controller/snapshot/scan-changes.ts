import type { ObjectStatus } from "../../status/status-types.js";
import { type DesiredSnapshot, diffSnapshots } from "./desired.js";

// What one rescan means for the controller, decided without I/O: which objects to queue, which to
// drop, and which status records must now say their manifest is broken.

type RemovedObject = {
  key: string;
  /** True when its file now has errors (as opposed to the document being deleted). */
  invalid: boolean;
  /** Its status record marked Failed with the first problem, when it had one and is now invalid. */
  record: ObjectStatus | null;
};

export type ScanOutcome = {
  /** New or edited objects: reconcile these. */
  changed: string[];
  removed: RemovedObject[];
  /** Problems appeared, changed or were fixed: log the current ones. */
  reportProblems: boolean;
};

export function planScan(
  before: DesiredSnapshot,
  next: DesiredSnapshot,
  statuses: ReadonlyMap<string, ObjectStatus>,
  now: number,
): ScanOutcome {
  const changes = diffSnapshots(before, next);
  const removed = changes.removed.map((key): RemovedObject => {
    const file = before.objects.get(key)?.loaded.file;
    const problems = file ? next.invalid.get(file) : undefined;
    const previous = statuses.get(key);
    const first = problems?.[0];
    return {
      key,
      invalid: problems !== undefined,
      record:
        first && previous
          ? {
              ...previous,
              sync: "Failed",
              last_error: `invalid manifest ${first.file}:${first.line}:${first.column}: ${first.message}`,
              updated_at: new Date(now).toISOString(),
            }
          : null,
    };
  });
  return { changed: changes.changed, removed, reportProblems: changes.problemsChanged };
}
