// Rate limits of spec 8.2 as a table: the first row whose match and identity apply decides.
// Rows are in the spec's order except that the two Default rows and the catch-all come last
// (otherwise /runs/stats and /public/download could never match).

type RateCategory =
  | "High throughput"
  | "Repository"
  | "Run ingest"
  | "Charts"
  | "Multipart ingest"
  | "Run query (API)"
  | "Run query (User)"
  | "Generation"
  | "Commits"
  | "Deletion"
  | "Run lookup"
  | "Examples"
  | "Default (API key)"
  | "Default (User)"
  | "Public download"
  | "Stats"
  | "Public (catch-all)";
type RateLimit = { count: number; intervalSeconds: number };
export type RateLimitOverrides = Partial<Record<RateCategory, RateLimit>>;
type Identity = "ip" | "api-key" | "user-ip";
type Row = {
  category: RateCategory;
  identity: Identity;
  match: (method: string, path: string) => boolean;
  us: RateLimit;
  eu: RateLimit;
};

const lim = (count: number, intervalSeconds: number): RateLimit => ({ count, intervalSeconds });
const under = (prefix: string) => (_m: string, p: string) => p === prefix || p.startsWith(`${prefix}/`);
const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
const RUN_LOOKUP = new RegExp(`^(/api/v1)?/runs/${UUID}$`);

function row(category: RateCategory, identity: Identity, match: Row["match"], us: RateLimit, eu = us): Row {
  return { category, identity, match, us, eu };
}
function both(
  category: RateCategory,
  match: Row["match"],
  api: RateLimit,
  user = api,
  euApi = api,
  euUser = user,
) {
  return [row(category, "api-key", match, api, euApi), row(category, "user-ip", match, user, euUser)];
}

const RATE_LIMIT_TABLE: readonly Row[] = [
  row(
    "High throughput",
    "ip",
    // `/info/` too: it is answered as `/info` (a 307 to it, no key needed), so it is limited as `/info`
    (m, p) => m === "OPTIONS" || /^\/info\/*$/.test(p) || p.endsWith("/v1/metadata/submit"),
    lim(2000, 10),
  ),
  ...both("High throughput", under("/auth"), lim(2000, 10)),
  row("High throughput", "ip", under("/v1/beacon"), lim(2000, 10)),
  ...both("Repository", under("/repos"), lim(100, 60)),
  row("High throughput", "api-key", (m, p) => m === "POST" && p === "/runs/batch", lim(2000, 10)),
  row("Run ingest", "api-key", (m, p) => m === "POST" && p === "/otel/v1/traces", lim(2000, 10)),
  ...both("Charts", (m, p) => m === "POST" && p.includes("/charts"), lim(750, 600)),
  row("Multipart ingest", "api-key", (m, p) => m === "POST" && p === "/runs/multipart", lim(6000, 10)),
  row("Run query (API)", "api-key", (m, p) => m === "POST" && p === "/runs/query", lim(15, 10)),
  row("Run query (User)", "user-ip", (m, p) => m === "POST" && p === "/runs/query", lim(300, 10)),
  ...both("Generation", under("/generate"), lim(30, 3600)),
  ...both("Commits", under("/commits"), lim(10000, 60), lim(10000, 60), lim(2000, 60), lim(2000, 60)),
  ...both(
    "Deletion",
    (m, p) => (m === "DELETE" && under("/sessions")(m, p)) || p.endsWith("/trigger"),
    lim(10, 60),
    lim(30, 60),
  ),
  row("Run ingest", "api-key", (m, p) => m === "POST" && p === "/runs", lim(2000, 10)),
  row("Run ingest", "api-key", (m, p) => m === "PATCH" && p.includes("/runs"), lim(2000, 10)),
  row("High throughput", "api-key", (m, p) => m === "POST" && p === "/feedback", lim(2000, 10)),
  row("Run lookup", "api-key", (m, p) => m === "GET" && RUN_LOOKUP.test(p), lim(30, 60)),
  row("Examples", "api-key", (m, p) => m === "GET" && p.includes("/examples"), lim(5000, 60)),
  row("Public download", "ip", under("/public/download"), lim(5000, 60)),
  row("Stats", "api-key", under("/runs/stats"), lim(1, 10), lim(20, 10)),
  row("Default (API key)", "api-key", () => true, lim(1000, 10)),
  row("Default (User)", "user-ip", () => true, lim(1000, 10)),
  row("Public (catch-all)", "ip", () => true, lim(100, 60)),
];

export type RateRequest = { method: string; path: string; ip: string; apiKey?: string; userId?: string };
export type RateVerdict =
  { allowed: true } | { allowed: false; retryAfterSeconds: number; category: RateCategory };

type Window = { start: number; end: number; count: number };
/**
 * Windows kept at most: an identity the server cannot check (an `x-user-id` on the upload PUT, which
 * needs no key, or on a request refused for its key) would otherwise get a window per value sent.
 */
const MAX_RATE_WINDOWS = 100_000;

/** Fixed windows per (row, identity), timed by the injected clock; at most `maxWindows` kept. */
export function createRateLimiter(
  region: "us" | "eu",
  overrides: RateLimitOverrides,
  now: () => number,
  maxWindows = MAX_RATE_WINDOWS,
) {
  const windows = new Map<string, Window>();
  let checks = 0;
  const limiter = (request: RateRequest): RateVerdict => {
    const found = findRow(request);
    if (!found) return { allowed: true };
    const { row: match, identity } = found;
    const limit = overrides[match.category] ?? match[region];
    const intervalMs = limit.intervalSeconds * 1000;
    const t = now();
    if (++checks % 10_000 === 0) prune(windows, t);
    // Each row is a limit of its own (spec 8.2): rows of one category do not share a window.
    const key = `${found.index}\u0000${identity}`;
    let window = windows.get(key);
    if (!window || t >= window.end) {
      if (!window && windows.size >= maxWindows) makeRoom(windows, t, maxWindows);
      window = { start: t, end: t + intervalMs, count: 0 };
      windows.set(key, window);
    }
    if (window.count >= limit.count) {
      const retryAfterSeconds = Math.max(1, Math.ceil((window.end - t) / 1000));
      return { allowed: false, retryAfterSeconds, category: match.category };
    }
    window.count += 1;
    return { allowed: true };
  };
  /** Windows held now (tests). */
  limiter.size = () => windows.size;
  return limiter;
}

/**
 * The rows an agent-server path (`/agents/{id}/...`) can fall under: decisions.md "Rate limits" puts
 * its routes under Default (API key). The table's paths are the hosted API's, from its root, so
 * `PATCH .../runs/crons/{id}` "contains /runs" (Run ingest) and `.../threads/trigger` ends with
 * `/trigger` (Deletion) only by sharing this host. OPTIONS stays High throughput by address.
 */
const AGENT_SERVER_ROWS: ReadonlySet<RateCategory> = new Set([
  "High throughput",
  "Default (API key)",
  "Default (User)",
  "Public (catch-all)",
]);

function findRow(request: RateRequest): { row: Row; index: number; identity: string } | undefined {
  const method = request.method.toUpperCase();
  const agentServer = request.path.startsWith("/agents/");
  for (let index = 0; index < RATE_LIMIT_TABLE.length; index++) {
    const candidate = RATE_LIMIT_TABLE[index] as Row;
    if (agentServer && !AGENT_SERVER_ROWS.has(candidate.category)) continue;
    if (!candidate.match(method, request.path)) continue; // cheaper than building the identity
    const identity = identityOf(candidate.identity, request);
    if (identity !== undefined) return { row: candidate, index, identity };
  }
  return undefined;
}

function identityOf(kind: Identity, request: RateRequest): string | undefined {
  if (kind === "ip") return `ip:${request.ip}`;
  if (kind === "api-key") return request.apiKey ? `key:${request.apiKey}` : undefined;
  return request.userId ? `user:${request.userId}:${request.ip}` : undefined;
}

function prune(windows: Map<string, Window>, t: number) {
  for (const [key, window] of windows) if (t >= window.end) windows.delete(key);
}

/**
 * Room for one more window: the ended ones go, then, if the table is still full, a tenth of it,
 * the identities first seen longest ago. A client whose window goes this way starts a new one: under a
 * flood of unchecked identities the limits loosen a little rather than memory growing.
 */
function makeRoom(windows: Map<string, Window>, t: number, maxWindows: number) {
  prune(windows, t);
  if (windows.size < maxWindows) return;
  let excess = windows.size - maxWindows + Math.max(1, Math.floor(maxWindows / 10));
  for (const key of windows.keys()) {
    if (excess-- <= 0) break;
    windows.delete(key);
  }
}
