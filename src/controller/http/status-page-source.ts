import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import type { Clock } from "../../clock.js";
import type { ObjectStatus } from "../../status/status-types.js";
import { statusKey } from "../../status/status-types.js";
import { publicUrl } from "../../api/public-url.js";
import { firstProblems, type ObjectDetail, type PageHeader } from "../../status-page/page-header.js";
import { buildObjectPage, buildObjectRow, type PageObject } from "../../status-page/page-model.js";
import type { ActivityBook } from "./activity-book.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";
import { errorMessage } from "../error-message.js";
import type { PageRoutes } from "./page-routes.js";
import type { PageEvents } from "./page-events.js";

// The status page's data from the controller's state: git's objects (file and line), the status
// records, the last reconcile of each, and a deployment's revisions read from the control plane.

const REVISIONS_SHOWN = 10;
const REVISIONS_TIMEOUT_MS = 5_000;
/** A deployment's revisions read for the page are shown again, to every viewer, this long. */
const REVISIONS_FRESH_MS = 2_000;
/** The page's share of the key's API budget: reads of revisions started per second, at most. */
const PAGE_READS_PER_SECOND = 5;

type RevisionRows = NonNullable<ObjectDetail["revisions"]>;

/**
 * The revisions the detail view shows, read at most once per deployment per REVISIONS_FRESH_MS
 * whoever asks (viewers asking at once share the read) and at most PAGE_READS_PER_SECOND reads
 * in all. Each read was a request on the controller's own key and limiter: 600 viewers of one
 * detail view spent the whole budget (3,000 list calls in 30 s) and a one-field change took 17 s
 * to roll out instead of 3.
 */
function createRevisionReader(
  controlPlane: Pick<ControlPlaneClient, "listRevisions">,
  clock: Clock,
): (id: string) => Promise<RevisionRows> {
  const recent = new Map<string, { at: number; rows: Promise<RevisionRows> }>();
  let started: number[] = [];
  return (id) => {
    const now = clock.now();
    const cached = recent.get(id);
    if (cached && now - cached.at < REVISIONS_FRESH_MS) return cached.rows;
    started = started.filter((at) => now - at < 1_000);
    if (started.length >= PAGE_READS_PER_SECOND)
      return Promise.reject(
        new Error(
          `the page reads at most ${PAGE_READS_PER_SECOND} deployments' revisions a second; shown again shortly`,
        ),
      );
    started.push(now);
    for (const [key, entry] of recent) if (now - entry.at >= REVISIONS_FRESH_MS) recent.delete(key);
    const rows = controlPlane
      .listRevisions(id, { limit: REVISIONS_SHOWN, signal: AbortSignal.timeout(REVISIONS_TIMEOUT_MS) })
      .then((page) =>
        page.resources.map((r) => ({
          id: r.id,
          status: r.status,
          created_at: r.created_at,
          status_message: r.status_message,
        })),
      );
    recent.set(id, { at: now, rows });
    // A failed read is not shown again: the next view reads.
    rows.catch(() => recent.get(id)?.rows === rows && recent.delete(id));
    return rows;
  };
}

/** What the page's header reads, each when asked. */
export type HeaderSources = {
  ready: () => boolean;
  source: { kind: string; location: string; commit(): string | null };
  /** The branch followed (git), else null. */
  branch: string | null;
  apiUrl: string;
  apiState: () => PageHeader["api"];
  /** Requests sent in the current rate-limit window. */
  requests: () => number;
  budget: { limit: number; windowMs: number };
  nextDriftCheck: () => Date | null;
  queue: () => PageHeader["queue"];
};

export type StatusPageSources = {
  header: HeaderSources;
  snapshot: () => DesiredSnapshot;
  statuses: ReadonlyMap<string, ObjectStatus>;
  activity: Pick<ActivityBook, "get">;
  controlPlane: Pick<ControlPlaneClient, "listRevisions">;
  events: Pick<PageEvents, "subscribe">;
  clock: Clock;
};

export function createStatusPageRoutes(sources: StatusPageSources): PageRoutes {
  const revisions = createRevisionReader(sources.controlPlane, sources.clock);
  const pageObject = (key: string): PageObject | undefined => {
    const entry = sources.snapshot().objects.get(key);
    const status = sources.statuses.get(key);
    const kind = entry?.loaded.manifest.kind ?? status?.kind;
    const name = entry?.loaded.manifest.metadata.name ?? status?.name;
    if (!kind || !name) return undefined;
    const manifest = entry ? { file: entry.loaded.file, line: entry.loaded.location.line } : undefined;
    return { kind, name, status, manifest, activity: sources.activity.get(key) };
  };
  // Objects in git, and recorded objects no longer in git (kept, or invalid right now).
  function* pageObjects(): Generator<PageObject> {
    const objects = sources.snapshot().objects;
    for (const key of objects.keys()) yield pageObject(key)!;
    for (const key of sources.statuses.keys()) if (!objects.has(key)) yield pageObject(key)!;
  }

  return {
    header: () => buildHeader(sources.header, sources.snapshot(), sources.clock.now()),
    objects: (query) => buildObjectPage(pageObjects(), query),
    async detail(kind, name) {
      const object = pageObject(statusKey(kind, name));
      if (!object) return null;
      const detail: ObjectDetail = {
        object: buildObjectRow(object),
        revisions: null,
        revisions_error: null,
        last_plan: object.activity?.plan ?? [],
      };
      const id = object.status?.id;
      if (kind === "Deployment" && id) {
        try {
          detail.revisions = await revisions(id);
        } catch (error) {
          detail.revisions_error = `revisions not read: ${errorMessage(error)}`;
        }
      }
      return detail;
    },
    subscribe: (write) => sources.events.subscribe(write),
  };
}

function buildHeader(h: HeaderSources, snapshot: DesiredSnapshot, now: number): PageHeader {
  return {
    ready: h.ready(),
    role: "leader",
    source: {
      kind: h.source.kind,
      location: h.branch ? `${h.source.location}@${h.branch}` : h.source.location,
      commit: h.source.commit(),
    },
    control_plane: publicUrl(h.apiUrl),
    api: h.apiState(),
    rate_limit: { used: h.requests(), limit: h.budget.limit, window_seconds: h.budget.windowMs / 1000 },
    next_drift_check: h.nextDriftCheck()?.toISOString() ?? null,
    queue: h.queue(),
    ...firstProblems(
      [...snapshot.invalid].map(([file, problems]) => ({
        file,
        problems: problems.map((p) => ({ line: p.line, column: p.column, message: p.message })),
      })),
    ),
    now: new Date(now).toISOString(),
  };
}
