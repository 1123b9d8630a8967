import type { ObjectStatus } from "../reconcile/status-types.js";
import type { ControllerStatusJson } from "./controller-types.js";
import type { DesiredSnapshot } from "./desired.js";

// GET /status: the controller's state as JSON. Pure.

export type StatusViewInput = {
  ready: boolean;
  source: ControllerStatusJson["source"];
  statuses: Iterable<ObjectStatus>;
  snapshot: DesiredSnapshot;
  queue: ControllerStatusJson["queue"];
};

export function buildStatusJson(input: StatusViewInput): ControllerStatusJson {
  return {
    ready: input.ready,
    source: input.source,
    objects: [...input.statuses].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    invalid: [...input.snapshot.invalid].map(([file, problems]) => ({
      file,
      problems: problems.map((p) => ({ line: p.line, column: p.column, code: p.code, message: p.message })),
    })),
    queue: input.queue,
  };
}
