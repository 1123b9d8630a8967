import type { Line } from "../report/format-lines.js";
import type { ChecksRecord } from "../status/checks/checks-record.js";
import { checksRecordInvalid } from "../status/checks/checks-record-problems.js";
import {
  HEALTH_STATUSES,
  type HealthStatus,
  type ObjectStatus,
  SYNC_STATUSES,
  type SyncStatus,
} from "../status/status-types.js";

// What the status page shows, as JSON for its script: one page of object rows (filtered, searched,
// paged on the server so 10,000 objects never reach the browser at once) and one object's detail.
// Pure. Never a secret fingerprint, a pending intent or a value: rows are built field by field.

/** The controller's last reconcile of one object (kept in memory, src/controller/http/activity-book.ts). */
export type Activity = {
  at: string;
  reason: string;
  /** applied, in-sync, drift-reported, failed, refused, timeout, ... */
  result: string;
  action: string;
  duration_ms: number;
  /** Fields that differed from git when the reconcile was a drift check. */
  drift_fields: string[];
  /** The plan of that reconcile, redacted lines as `plumb plan` prints them. */
  plan: Line[];
};

/** One object as the controller knows it: in git (file, line), recorded (status), reconciled (activity). */
export type PageObject = {
  kind: string;
  name: string;
  status: ObjectStatus | undefined;
  manifest: { file: string; line: number } | undefined;
  activity: Activity | undefined;
};

export type ObjectRow = {
  kind: string;
  name: string;
  sync: SyncStatus;
  health: HealthStatus;
  id: string | null;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  revision_status: string | null;
  updated_at: string | null;
  git_commit: string | null;
  /** null when the object is no longer in git (or its file is invalid right now). */
  file: string | null;
  line: number | null;
  last_reconcile: Omit<Activity, "plan" | "drift_fields"> | null;
  last_error: string | null;
  drift_fields: string[];
  /** The agent's checks of the revision they name (spec.verify); null before any ran. */
  checks: ChecksRecord | null;
  /** The first problem of a self-contradictory checks record (then checks is null): none of its figures are shown. */
  checks_invalid: string | null;
};

export type ObjectQuery = { sync?: string; health?: string; q?: string; offset?: number; limit?: number };

export type ObjectPage = {
  total: number;
  /** How many match the filters and search (the rows are one page of these). */
  matched: number;
  offset: number;
  limit: number;
  counts: { sync: Record<SyncStatus, number>; health: Record<HealthStatus, number> };
  rows: ObjectRow[];
};

const MAX_PAGE_SIZE = 200;
const DEFAULT_PAGE_SIZE = 50;

export function buildObjectRow(object: PageObject): ObjectRow {
  const { status, activity } = object;
  const invalid = status?.checks ? checksRecordInvalid(status.checks) : null;
  return {
    kind: object.kind,
    name: object.name,
    // Known to git, not reconciled yet: nothing is known about live.
    sync: status?.sync ?? "Unknown",
    health: status?.health ?? "Unknown",
    id: status?.id ?? null,
    latest_revision_id: status?.latest_revision_id ?? null,
    active_revision_id: status?.active_revision_id ?? null,
    revision_status: status?.revision_status ?? null,
    updated_at: status?.updated_at || null,
    git_commit: status?.git_commit ?? null,
    file: object.manifest?.file ?? null,
    line: object.manifest?.line ?? null,
    last_reconcile: activity
      ? {
          at: activity.at,
          reason: activity.reason,
          result: activity.result,
          action: activity.action,
          duration_ms: activity.duration_ms,
        }
      : null,
    last_error: status?.last_error ?? null,
    drift_fields: activity?.drift_fields ?? [],
    checks: invalid ? null : (status?.checks ?? null),
    checks_invalid: invalid,
  };
}

const zeroCounts = <T extends string>(names: readonly T[]) =>
  Object.fromEntries(names.map((n) => [n, 0])) as Record<T, number>;

/** Sorted by name (then kind); counts are over every object, before the filters. */
export function buildObjectPage(objects: Iterable<PageObject>, query: ObjectQuery): ObjectPage {
  const counts = { sync: zeroCounts(SYNC_STATUSES), health: zeroCounts(HEALTH_STATUSES) };
  const needle = (query.q ?? "").trim().toLowerCase();
  const matched: ObjectRow[] = [];
  let total = 0;
  for (const object of objects) {
    const row = buildObjectRow(object);
    total++;
    counts.sync[row.sync]++;
    counts.health[row.health]++;
    if (query.sync && row.sync !== query.sync) continue;
    if (query.health && row.health !== query.health) continue;
    if (needle && !searchText(row).includes(needle)) continue;
    matched.push(row);
  }
  matched.sort((a, b) => compare(a.name, b.name) || compare(a.kind, b.kind));
  const limit = clamp(query.limit ?? DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  const offset = clamp(query.offset ?? 0, 0, Math.max(0, matched.length - 1));
  return {
    total,
    matched: matched.length,
    offset,
    limit,
    counts,
    rows: matched.slice(offset, offset + limit).map(listRow),
  };
}

/**
 * The most of an error a row of the list carries; the detail view has it whole. A server that
 * quotes the request it refused (a 100 KB value echoed in every form) made one row 485 KB, and a
 * page of 50 such rows, re-read at each live update, tens of megabytes.
 */
export const LIST_ERROR_CHARS = 1_000;

function listRow(row: ObjectRow): ObjectRow {
  const error = row.last_error;
  if (error === null || error.length <= LIST_ERROR_CHARS) return row;
  const kept = error.slice(0, LIST_ERROR_CHARS).replace(/[\ud800-\udbff]$/, "");
  return { ...row, last_error: `${kept}… (${error.length - kept.length} more characters: open the object)` };
}

const searchText = (row: ObjectRow) =>
  [row.name, row.kind, row.id ?? "", row.file ?? "", row.last_error ?? ""].join("\n").toLowerCase();
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const clamp = (n: number, low: number, high: number) =>
  Number.isFinite(n) ? Math.min(high, Math.max(low, Math.trunc(n))) : low;

/** Reads the list query from a URL's search parameters (anything malformed falls back to defaults). */
export function parseObjectQuery(params: URLSearchParams): ObjectQuery {
  const text = (name: string) => params.get(name)?.slice(0, 200) || undefined;
  const number = (name: string) => (params.has(name) ? Number(params.get(name)) : undefined);
  return {
    ...optional("sync", text("sync")),
    ...optional("health", text("health")),
    ...optional("q", text("q")),
    ...optional("offset", number("offset")),
    ...optional("limit", number("limit")),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
