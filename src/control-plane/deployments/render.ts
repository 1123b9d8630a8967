import { type DeploymentRecord, formatLivePart, formatStoredPart, type Timing } from "./record.js";

// Reads dominate (clients poll deployments while revisions roll out), so the JSON of the stored
// part of a deployment is kept per record version and only the time-dependent tail (status,
// latest and active revision) is computed per read. Same fields, same order as formatDeployment.

type Cached = { version: number; baseUrl: string; head: string };

export type DeploymentRenderer = {
  /**
   * The deployment's JSON text at `now`, equal to JSON.stringify(formatDeployment(...)). Reads
   * keep the stored part for the next read; answers to writes do not (`remember: false`), so
   * records nobody reads cost no memory.
   */
  render(record: DeploymentRecord, now: number, remember?: boolean): string;
  /** `{"resources": [...], "offset": n}` of several deployments. */
  renderPage(records: DeploymentRecord[], now: number, offset: number): string;
};

export function createDeploymentRenderer(
  timing: Timing,
  baseUrl: () => string,
  versionOf: (record: DeploymentRecord) => number,
): DeploymentRenderer {
  const cache = new WeakMap<DeploymentRecord, Cached>();
  const headOf = (record: DeploymentRecord, remember: boolean): string => {
    const version = versionOf(record);
    const url = baseUrl();
    const cached = cache.get(record);
    if (cached && cached.version === version && cached.baseUrl === url) return cached.head;
    // `{...stored}` without its closing brace; the tail opens with a comma.
    const head = JSON.stringify(formatStoredPart(record, url)).slice(0, -1);
    if (remember) cache.set(record, { version, baseUrl: url, head });
    else cache.delete(record);
    return head;
  };
  const render = (record: DeploymentRecord, now: number, remember = true) =>
    `${headOf(record, remember)},${JSON.stringify(formatLivePart(record, now, timing)).slice(1)}`;
  return {
    render,
    renderPage: (records, now, offset) =>
      `{"resources":[${records.map((r) => render(r, now)).join(",")}],"offset":${offset}}`,
  };
}
