import { checksRecordInvalid } from "../status/checks/checks-record-problems.js";
import type { HealthStatus, ObjectStatus, SyncStatus } from "../status/status-types.js";

// The status page's deployment × environment matrix (docs/environments.md "Checks" and the
// controller's page): one row per deployment, one cell per environment, environments in promotion
// order, and where a later environment runs another version than the one it is promoted from. Pure.

/**
 * What buildEnvironmentMatrix needs of one environment. The controller gives one per Environment
 * document of the repository:
 * - `name`: metadata.name of the Environment;
 * - `promotion_from`: its spec.promotion.from (absent or null when it has no promotion);
 * - `name_suffix`: its spec.name_suffix, taken off the recorded names so that `support-agent` in
 *   prod and `support-agent-staging` in staging share a row;
 * - `records`: the status records of its store (.plumb/status/ENV/), e.g. StatusStore.objects'
 *   values; only Deployments are shown.
 */
export type MatrixEnvironment = {
  name: string;
  promotion_from?: string | null | undefined;
  name_suffix?: string | null | undefined;
  records: Iterable<ObjectStatus>;
};

type MatrixCell = {
  /** The deployed name in this environment (with its suffix). */
  name: string;
  revision_id: string | null;
  revision_status: string | null;
  /** What runs: repo_ref (gitrepo), image_uri (containers) or the upload's digest (internal_source). */
  version: string | null;
  sync: SyncStatus;
  health: HealthStatus;
  /** The agent's checks of the active revision; null when none ran on it. */
  checks: { passed: number; runs: number; pass_ratio: number; p95_ms: number } | null;
  /** The first problem of a self-contradictory checks record of the active revision (then checks is null). */
  checks_invalid: string | null;
  /** The environment this one is promoted from, when that runs another version (null: not behind). */
  lags_behind: string | null;
};

type MatrixRow = {
  /** The deployment's name without any environment's suffix. */
  deployment: string;
  /** One per environment, in `environments` order; null where the deployment does not run. */
  cells: Array<MatrixCell | null>;
  lagging: boolean;
};

export type EnvironmentMatrix = {
  /** Environment names in promotion order. */
  environments: string[];
  /** For each environment (same order), the one compared with: its promotion source, or null. */
  upstream: Array<string | null>;
  rows: MatrixRow[];
  /** How many rows have a lagging cell. */
  lagging: number;
};

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Promotion order: each chain from its start (an environment promoted from nothing known), every
 * environment right after the one it is promoted from; ties and cycles by name.
 */
export function promotionOrder(
  environments: ReadonlyArray<Pick<MatrixEnvironment, "name" | "promotion_from">>,
): string[] {
  const names = new Set(environments.map((e) => e.name));
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  for (const e of environments) {
    const from = e.promotion_from;
    if (from && names.has(from) && from !== e.name)
      children.set(from, [...(children.get(from) ?? []), e.name]);
    else roots.push(e.name);
  }
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    order.push(name);
    for (const child of [...(children.get(name) ?? [])].sort(compare)) visit(child);
  };
  for (const root of roots.sort(compare)) visit(root);
  // Environments in a promotion cycle have no start: by name, after the rest.
  for (const name of [...names].sort(compare)) visit(name);
  return order;
}

/** What a record says runs: the applied spec's repo_ref or image_uri, else the uploaded digest. */
export function versionOf(record: ObjectStatus): string | null {
  const spec = record.applied_spec as { source_revision_config?: Record<string, unknown> } | null | undefined;
  const config = spec?.source_revision_config;
  for (const key of ["repo_ref", "image_uri"]) {
    const value = config?.[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return record.source_upload?.digest ?? null;
}

const baseName = (name: string, suffix: string | null | undefined) =>
  suffix && name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : name;

function cellOf(record: ObjectStatus): Omit<MatrixCell, "lags_behind"> {
  const checks = record.checks;
  const active = checks && checks.revision_id === record.active_revision_id ? checks : null;
  const invalid = active && checksRecordInvalid(active);
  const current = invalid ? null : active;
  return {
    name: record.name,
    revision_id: record.active_revision_id ?? record.latest_revision_id,
    revision_status: record.revision_status,
    version: versionOf(record),
    sync: record.sync,
    health: record.health,
    checks: current
      ? {
          passed: current.passed,
          runs: current.runs,
          pass_ratio: current.pass_ratio,
          p95_ms: current.latency_ms.p95,
        }
      : null,
    checks_invalid: invalid || null,
  };
}

/**
 * The deployment × environment matrix from each environment's status records. A cell lags when
 * the environment it is compared with (its promotion.from; without any promotion in the
 * repository, the environment before it by name) runs the deployment at another version.
 */
export function buildEnvironmentMatrix(environments: readonly MatrixEnvironment[]): EnvironmentMatrix {
  const order = promotionOrder(environments);
  const byName = new Map(environments.map((e) => [e.name, e]));
  const anyPromotion = environments.some((e) => e.promotion_from && byName.has(e.promotion_from));
  const upstream = order.map((name, i) => {
    if (!anyPromotion) return i > 0 ? order[i - 1]! : null;
    const from = byName.get(name)?.promotion_from;
    return from && byName.has(from) && from !== name ? from : null;
  });
  const cells = new Map<string, Map<string, Omit<MatrixCell, "lags_behind">>>();
  for (const name of order) {
    const env = byName.get(name)!;
    for (const record of env.records) {
      if (record.kind !== "Deployment") continue;
      const deployment = baseName(record.name, env.name_suffix);
      const row = cells.get(deployment) ?? new Map<string, Omit<MatrixCell, "lags_behind">>();
      row.set(name, cellOf(record));
      cells.set(deployment, row);
    }
  }
  const rows = [...cells.keys()].sort(compare).map((deployment): MatrixRow => {
    const row = cells.get(deployment)!;
    const out = order.map((name, i): MatrixCell | null => {
      const cell = row.get(name);
      if (!cell) return null;
      const from = upstream[i] ?? null;
      const source = from === null ? undefined : row.get(from);
      const behind =
        source && source.version !== null && cell.version !== null && source.version !== cell.version;
      return { ...cell, lags_behind: behind ? from : null };
    });
    return { deployment, cells: out, lagging: out.some((c) => c?.lags_behind) };
  });
  return { environments: order, upstream, rows, lagging: rows.filter((r) => r.lagging).length };
}

/** The page's route for the matrix (GET, behind the status token like the other /ui/api/ routes). */
export const MATRIX_API_PATH = "/ui/api/matrix";

export type MatrixQuery = { q?: string; lagging?: boolean; offset?: number; limit?: number };

/** One page of the matrix: rows filtered (name contains q; only lagging) and cut to `limit`. */
export type MatrixPage = Omit<EnvironmentMatrix, "rows"> & {
  total: number;
  matched: number;
  offset: number;
  limit: number;
  rows: MatrixRow[];
};

const MAX_MATRIX_ROWS = 200;

/** The matrix route's answer: buildEnvironmentMatrix, then the query's page of rows. */
export function buildMatrixPage(environments: readonly MatrixEnvironment[], query: MatrixQuery): MatrixPage {
  const matrix = buildEnvironmentMatrix(environments);
  const needle = (query.q ?? "").trim().toLowerCase();
  const matched = matrix.rows.filter(
    (r) => (!query.lagging || r.lagging) && (!needle || r.deployment.toLowerCase().includes(needle)),
  );
  const limit = clamp(query.limit ?? 50, 1, MAX_MATRIX_ROWS);
  const offset = clamp(query.offset ?? 0, 0, Math.max(0, matched.length - 1));
  return {
    ...matrix,
    total: matrix.rows.length,
    matched: matched.length,
    offset,
    limit,
    rows: matched.slice(offset, offset + limit),
  };
}

const clamp = (n: number, low: number, high: number) =>
  Number.isFinite(n) ? Math.min(high, Math.max(low, Math.trunc(n))) : low;

/** The matrix query from a URL's search parameters (malformed values fall back to defaults). */
export function parseMatrixQuery(params: URLSearchParams): MatrixQuery {
  const query: MatrixQuery = {};
  const q = params.get("q")?.slice(0, 200);
  if (q) query.q = q;
  if (params.get("lagging") === "1") query.lagging = true;
  if (params.has("offset")) query.offset = Number(params.get("offset"));
  if (params.has("limit")) query.limit = Number(params.get("limit"));
  return query;
}
