// The demo's view of the status page's deployment × environment matrix (GET /ui/api/matrix) as a
// text table: each agent's version in each environment, and where one lags the environment it is
// promoted from. Pure but for the fetch.

type Cell = {
  version: string | null;
  sync: string;
  health: string;
  lags_behind: string | null;
} | null;
type Matrix = { environments: string[]; rows: Array<{ deployment: string; cells: Cell[] }> };

/** A version as people say it: the tag, the image tag, or a digest's first 12 characters. */
function shortVersion(version: string | null): string {
  if (version === null) return "?";
  if (version.startsWith("sha256:")) return version.slice(0, 19);
  return version.replace(/^refs\/tags\//, "").replace(/^.*\/([^/]+:[^:/]+)$/, "$1");
}

function cellText(cell: Cell): string {
  if (!cell) return "-";
  const state = cell.sync === "Synced" && cell.health === "Healthy" ? "" : ` ${cell.sync}/${cell.health}`;
  return `${shortVersion(cell.version)}${state}${cell.lags_behind ? ` (behind ${cell.lags_behind})` : ""}`;
}

export function formatMatrix(matrix: Matrix): string {
  const header = ["deployment", ...matrix.environments];
  const rows = matrix.rows.map((r) => [r.deployment, ...r.cells.map(cellText)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** The matrix the controller at `url` serves now. */
export async function fetchMatrix(url: string): Promise<Matrix> {
  const res = await fetch(`${url}/ui/api/matrix`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET /ui/api/matrix answered ${res.status}`);
  return (await res.json()) as Matrix;
}

type Settling = { environments?: Array<{ role: string; settled: boolean }> };

/** Whether every one of `count` environments is led and settled within `timeoutMs` (polled). */
export async function waitSettled(
  status: () => Settling,
  count: number,
  timeoutMs: number,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const environments = status().environments ?? [];
    if (environments.length === count && environments.every((e) => e.role === "leader" && e.settled))
      return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
