import type { Activity, ObjectRow } from "./page-model.js";

// The status page's header and one object's detail view, as JSON for the page's script. Pure.

export type PageHeader = {
  ready: boolean;
  /** A standby serves the page too, with no objects: it reconciles nothing until it leads. */
  role: "leader" | "standby";
  /** On a standby: who holds the state lock (host, pid, since). */
  leader?: string;
  source: { kind: string; location: string; commit: string | null };
  /** The control plane's base URL without credentials, query or fragment. */
  control_plane: string;
  api: "up" | "down" | "unknown";
  /** Requests sent in the last rate-limit window against the key's budget for that window. */
  rate_limit: { used: number; limit: number; window_seconds: number };
  /** ISO time of the next scheduled drift check; null without --drift-schedule. */
  next_drift_check: string | null;
  queue: { pending: number; running: number; backingOff: number };
  /** The first HEADER_PROBLEMS problems of invalid manifests, by file (`/status` lists them all). */
  invalid: InvalidFile[];
  /** Problems of invalid manifests not in `invalid`. */
  invalid_more?: number;
  now: string;
  /** With environments: the environment this header is of (`?env=NAME`, else the first led here). */
  environment?: string;
  /**
   * With environments: every one and its role on this replica (the page's environment picker);
   * `invalid`: its Environment document in git is invalid (the last valid one runs).
   */
  environments?: Array<{ environment: string; role: string; invalid?: string }>;
};

type InvalidFile = { file: string; problems: Array<{ line: number; column: number; message: string }> };

/**
 * Problems the header lists at most. The page reads its header at each live update: 300 broken
 * files (a rule a new release adds, a bad merge) made each read 57 KB and each render 300 lines.
 */
export const HEADER_PROBLEMS = 50;

/** The first `max` problems, by file, and how many were left out. */
export function firstProblems(
  files: Iterable<InvalidFile>,
  max = HEADER_PROBLEMS,
): { invalid: InvalidFile[]; invalid_more?: number } {
  const invalid: InvalidFile[] = [];
  let listed = 0;
  let more = 0;
  for (const file of files) {
    const room = Math.max(0, max - listed);
    if (room > 0) invalid.push({ file: file.file, problems: file.problems.slice(0, room) });
    listed += Math.min(room, file.problems.length);
    more += Math.max(0, file.problems.length - room);
  }
  return more > 0 ? { invalid, invalid_more: more } : { invalid };
}

/** A standby's header: it reconciles nothing, so it has no queue, budget or control plane to show. */
export const buildStandbyHeader = (location: string, controlPlane: string, now: Date): PageHeader => ({
  ready: false,
  role: "standby",
  source: { kind: "standby", location, commit: null },
  control_plane: controlPlane,
  api: "unknown",
  rate_limit: { used: 0, limit: 0, window_seconds: 0 },
  next_drift_check: null,
  queue: { pending: 0, running: 0, backingOff: 0 },
  invalid: [],
  now: now.toISOString(),
});

type RevisionSummary = { id: string; status: string; created_at: string; status_message: string | null };

export type ObjectDetail = {
  object: ObjectRow;
  /** The control plane's revisions of this deployment, newest first; null when not read. */
  revisions: RevisionSummary[] | null;
  /** Why the revisions could not be read (the page still shows the rest). */
  revisions_error: string | null;
  last_plan: Activity["plan"];
};
