import { Registry } from "prom-client";
import { type ControllerHttp, startControllerHttp } from "../src/controller/http/http-server.js";
import type { PageHeader } from "../src/status-page/page-header.js";
import { buildObjectPage, buildObjectRow, type PageObject } from "../src/status-page/page-model.js";
import type { ObjectStatus } from "../src/status/status-types.js";

// A status page over synthetic objects, served by the real HTTP server and page model: the status
// page bench and its browser tests measure and drive it at 10,000 objects.

/** A leader's header with nothing going on; `overrides` for what a test looks at. */
export const quietHeader = (overrides: Partial<PageHeader> = {}): PageHeader => ({
  ready: true,
  role: "leader",
  source: { kind: "dir", location: "/manifests", commit: null },
  control_plane: "http://cp.example",
  api: "up",
  rate_limit: { used: 0, limit: 1000, window_seconds: 10 },
  next_drift_check: null,
  queue: { pending: 0, running: 0, backingOff: 0 },
  invalid: [],
  now: new Date().toISOString(),
  ...overrides,
});

/** `count` deployments agent-00000.., in 40 team directories, with the status `status` gives each. */
export const syntheticObjects = (
  count: number,
  status: (name: string, i: number) => ObjectStatus,
): PageObject[] =>
  Array.from({ length: count }, (_, i) => {
    const name = `agent-${String(i).padStart(5, "0")}`;
    return {
      kind: "Deployment",
      name,
      status: status(name, i),
      manifest: { file: `teams/team-${i % 40}/${name}.yaml`, line: 2 },
      activity: undefined,
    };
  });

/** The controller's HTTP server with a status page over `objects` (no token, no live events). */
export const serveSyntheticPage = (objects: PageObject[]): Promise<ControllerHttp> =>
  startControllerHttp(
    { host: "127.0.0.1", port: 0 },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => undefined,
      page: {
        header: () => quietHeader(),
        objects: (query) => buildObjectPage(objects, query),
        detail: async () => ({
          object: buildObjectRow(objects[0]!),
          revisions: [],
          revisions_error: null,
          last_plan: [],
        }),
        subscribe: () => () => undefined,
      },
    },
  );
