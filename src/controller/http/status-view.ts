import type { ObjectStatus } from "../../status/status-types.js";
import type { ControllerStatusJson, PublicObjectStatus } from "../controller-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";

// GET /status: the controller's state as JSON. Pure.

export type StatusViewInput = {
  ready: boolean;
  settled: boolean;
  source: ControllerStatusJson["source"];
  statuses: Iterable<ObjectStatus>;
  snapshot: DesiredSnapshot;
  queue: ControllerStatusJson["queue"];
};

export function buildStatusJson(input: StatusViewInput): ControllerStatusJson {
  return {
    ready: input.ready,
    settled: input.settled,
    source: input.source,
    objects: [...input.statuses]
      .map(withoutFingerprints)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    invalid: [...input.snapshot.invalid].map(([file, problems]) => ({
      file,
      problems: problems.map((p) => ({ line: p.line, column: p.column, code: p.code, message: p.message })),
    })),
    queue: input.queue,
  };
}

/** /status never carries secret fingerprints (guessable values could be tested offline against them). */
function withoutFingerprints(status: ObjectStatus): PublicObjectStatus {
  const { secret_fingerprints: _fingerprints, pending: _pending, ...rest } = status;
  return rest;
}

/** GET /status (and Controller.status()) read from the controller's live parts. */
export const statusReader =
  (parts: {
    ready: () => boolean;
    settled: () => boolean;
    source: { kind: string; location: string; commit(): string | null };
    book: { statuses: ReadonlyMap<string, ObjectStatus> };
    scanner: { snapshot(): StatusViewInput["snapshot"] };
    queue: { stats(): StatusViewInput["queue"] };
  }) =>
  (): ControllerStatusJson =>
    buildStatusJson({
      ready: parts.ready(),
      settled: parts.settled(),
      source: { kind: parts.source.kind, location: parts.source.location, commit: parts.source.commit() },
      statuses: parts.book.statuses.values(),
      snapshot: parts.scanner.snapshot(),
      queue: parts.queue.stats(),
    });
