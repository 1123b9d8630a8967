import { type DeploymentRecord, formatLivePart, formatStoredPart, type Timing } from "./record.js";

// Reads dominate (clients poll deployments while revisions roll out), so the JSON of the stored
// part of a deployment is kept per record version and only the time-dependent tail (status,
// latest and active revision) is computed per read. Same fields, same order as formatDeployment.

type Cached = { version: number; baseUrl: string; head: string };

export type DeploymentRenderer = {
  /** The deployment's JSON text at `now`, equal to JSON.stringify(formatDeployment(...)). */
  render(record: DeploymentRecord, now: number): string;
  /** `{"resources": [...], "offset": n}` of several deployments. */
  renderPage(records: DeploymentRecord[], now: number, offset: number): string;
};

export function createDeploymentRenderer(
  timing: Timing,
  baseUrl: () => string,
  versionOf: (record: DeploymentRecord) => number,
): DeploymentRenderer {
  const cache = new WeakMap<DeploymentRecord, Cached>();
  const headOf = (record: DeploymentRecord): string => {
    const version = versionOf(record);
    const url = baseUrl();
    const cached = cache.get(record);
    if (cached && cached.version === version && cached.baseUrl === url) return cached.head;
    // `{...stored}` without its closing brace; the tail opens with a comma.
    const head = JSON.stringify(formatStoredPart(record, url)).slice(0, -1);
    cache.set(record, { version, baseUrl: url, head });
    return head;
  };
  const render = (record: DeploymentRecord, now: number) =>
    `${headOf(record)},${JSON.stringify(formatLivePart(record, now, timing)).slice(1)}`;
  return {
    render,
    renderPage: (records, now, offset) =>
      `{"resources":[${records.map((r) => render(r, now)).join(",")}],"offset":${offset}}`,
  };
}
