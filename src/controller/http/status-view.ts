import type { ObjectStatus } from "../../status/status-types.js";
import type { ControllerStatusJson, PublicObjectStatus } from "../controller-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";

// GET /status: the controller's state as JSON. Pure. Over HTTP it is sent in pieces
// (statusJsonPieces): 10,000 records made a 10 MB string, its ~20 MB of bytes and 10,000 copies
// at every request, and a client polling /status (the memory bench, 4 times a second) kept the
// restart's RSS 40-55 MB higher on Node 24 (docs/controller.md "Speed and memory").

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
    objects: [...input.statuses].map(withoutFingerprints).sort(byName),
    invalid: [...input.snapshot.invalid].map(([file, problems]) => ({
      file,
      problems: problems.map((p) => ({ line: p.line, column: p.column, code: p.code, message: p.message })),
    })),
    queue: input.queue,
  };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Records per piece of statusJsonPieces (~1 KB each). */
const PIECE_RECORDS = 100;

/**
 * The text of `JSON.stringify(buildStatusJson(input))` and a newline, in pieces of `perPiece`
 * records, each record copied and serialised only when its piece is asked for.
 */
export function* statusJsonPieces(input: StatusViewInput, perPiece = PIECE_RECORDS): Generator<string> {
  const records = [...input.statuses].sort(byName);
  const shell = JSON.stringify(buildStatusJson({ ...input, statuses: [] }));
  // A string value holds its quotes escaped: the first `"objects":[` is the key itself.
  const at = shell.indexOf(`"objects":[]`) + `"objects":[`.length;
  let piece = shell.slice(0, at);
  for (let i = 0; i < records.length; i += perPiece) {
    const json = records.slice(i, i + perPiece).map((r) => JSON.stringify(withoutFingerprints(r)));
    yield `${piece}${i > 0 ? "," : ""}${json.join(",")}`;
    piece = "";
  }
  yield `${piece}${shell.slice(at)}\n`;
}

/** /status never carries secret fingerprints (guessable values could be tested offline against them). */
function withoutFingerprints(status: ObjectStatus): PublicObjectStatus {
  const { secret_fingerprints: _fingerprints, pending: _pending, ...rest } = status;
  return rest;
}

type StatusParts = {
  ready: () => boolean;
  settled: () => boolean;
  source: { kind: string; location: string; commit(): string | null };
  book: { statuses: ReadonlyMap<string, ObjectStatus> };
  scanner: { snapshot(): StatusViewInput["snapshot"] };
  queue: { stats(): StatusViewInput["queue"] };
};

const inputOf = (parts: StatusParts): StatusViewInput => ({
  ready: parts.ready(),
  settled: parts.settled(),
  source: { kind: parts.source.kind, location: parts.source.location, commit: parts.source.commit() },
  statuses: parts.book.statuses.values(),
  snapshot: parts.scanner.snapshot(),
  queue: parts.queue.stats(),
});

/** Controller.status() and GET /status's text (in pieces), read from the controller's live parts. */
export const statusReader = (parts: StatusParts) =>
  Object.assign((): ControllerStatusJson => buildStatusJson(inputOf(parts)), {
    pieces: () => statusJsonPieces(inputOf(parts)),
  });
