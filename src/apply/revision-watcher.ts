import pLimit from "p-limit";
import { type Backoff, backoffCeiling, backoffDelay, type Clock } from "../clock.js";
import type { Deployment } from "../schema/deployment.js";
import { FAILED_REVISION_STATUSES, type RevisionStatus } from "../schema/constants.js";
import type { DeploymentsPort } from "./ports.js";

/** How waiting for one revision ended. DEPLOYED is success; the rest are not. */
export type RevisionWait = {
  status: RevisionStatus | "TIMEOUT" | "ABORTED" | "VANISHED";
  /** The revision finally followed (a newer one when ours was superseded). */
  revisionId: string;
  supersededBy: string | null;
  statusMessage: string | null;
};

export type WatcherOptions = {
  clock: Clock;
  random: () => number;
  /** Absolute time (clock ms) after which every open wait ends with TIMEOUT. */
  deadline: number;
  signal?: AbortSignal | undefined;
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  /** Above this many open waits, one listing (100 per page) replaces per-deployment reads. */
  listThreshold?: number;
  /** Individual revision reads per round, at most: the rest of the budget is for the work itself. */
  maxReadsPerRound?: number;
  onStatus?: (deploymentId: string, status: RevisionStatus) => void;
};

type Entry = {
  revisionId: string;
  supersededBy: string | null;
  follows: number;
  /** Clock time of the next individual revision read; 0 = now. */
  readAt: number;
  reads: number;
  resolve: (wait: RevisionWait) => void;
};

const MAX_FOLLOWS = 5;

/**
 * Waits for many revisions at once while spending little of the API budget: each round lists the
 * deployments (which ones have active_revision_id == the awaited revision) and reads individual
 * revisions only where the listing cannot tell: to see a failure, or a superseded revision.
 * Per-revision reads back off exponentially with jitter.
 */
export function createRevisionWatcher(port: DeploymentsPort, options: WatcherOptions) {
  const w: Watcher = {
    port,
    options,
    clock: options.clock,
    pending: new Map(),
    listThreshold: options.listThreshold ?? 4,
    maxReads: options.maxReadsPerRound ?? 50,
    reads: pLimit(8),
    running: null,
    round: 0,
    listPages: 1,
  };
  return {
    /** Resolves when the revision is DEPLOYED, failed, superseded to the end, timed out or aborted. */
    wait(deploymentId: string, revisionId: string): Promise<RevisionWait> {
      return new Promise((resolve) => {
        const readAt = w.clock.now() + readDelay(w, 0);
        w.pending.set(deploymentId, {
          revisionId,
          supersededBy: null,
          follows: 0,
          readAt,
          reads: 0,
          resolve,
        });
        ensureLoop(w);
      });
    },
  };
}

/** One watcher's open waits and the state of its polling loop. */
type Watcher = {
  port: DeploymentsPort;
  options: WatcherOptions;
  clock: Clock;
  pending: Map<string, Entry>;
  listThreshold: number;
  maxReads: number;
  reads: ReturnType<typeof pLimit>;
  running: Promise<void> | null;
  round: number;
  /** Pages a listing costs; listing pays off only when more waits are open than that. */
  listPages: number;
};

// Reads (doubling) and listings (x1.5 per round) back off from the poll interval: half of each
// ceiling is fixed, the other half full jitter, so a wait is never under half its ceiling.
const half = (w: Watcher, factor: number): Backoff => ({
  baseMs: w.options.pollIntervalMs / 2,
  maxMs: w.options.maxPollIntervalMs / 2,
  factor,
});
const halfJittered = (w: Watcher, attempt: number, backoff: Backoff) =>
  Math.floor(backoffCeiling(attempt, backoff)) + backoffDelay(attempt, backoff, w.options.random);
const readDelay = (w: Watcher, n: number) => halfJittered(w, n + 1, half(w, 2));

function finish(w: Watcher, id: string, entry: Entry, wait: Omit<RevisionWait, "supersededBy">): void {
  w.pending.delete(id);
  entry.resolve({ ...wait, supersededBy: entry.supersededBy });
}

function follow(entry: Entry, latest: string): void {
  entry.supersededBy = latest;
  entry.revisionId = latest;
  entry.follows += 1;
  entry.readAt = 0;
  entry.reads = 0;
}

const base = (entry: Entry) => ({ revisionId: entry.revisionId, statusMessage: null });

async function readOne(w: Watcher, id: string, entry: Entry, deployment: Deployment | null): Promise<void> {
  const revision = await w.port.getRevision(id, entry.revisionId, { signal: w.options.signal });
  entry.reads += 1;
  w.options.onStatus?.(id, revision.status);
  if (revision.status === "DEPLOYED") return finish(w, id, entry, { ...base(entry), status: "DEPLOYED" });
  if (FAILED_REVISION_STATUSES.includes(revision.status)) {
    return finish(w, id, entry, {
      ...base(entry),
      status: revision.status,
      statusMessage: revision.status_message,
    });
  }
  if (revision.status === "SKIPPED") {
    // Superseded: the newer revision carries our configuration too (a PATCH merges into the
    // deployment), so follow it to the end instead of failing.
    const current = deployment ?? (await w.port.getDeployment(id, { signal: w.options.signal }));
    const latest = current?.latest_revision_id;
    if (latest && latest !== entry.revisionId && entry.follows < MAX_FOLLOWS) return follow(entry, latest);
    return finish(w, id, entry, {
      ...base(entry),
      status: "SKIPPED",
      statusMessage: revision.status_message,
    });
  }
  entry.readAt = w.clock.now() + readDelay(w, entry.reads);
}

async function roundOnce(w: Watcher): Promise<void> {
  const now = w.clock.now();
  const byId = new Map<string, Deployment>();
  const listed = w.pending.size > Math.max(w.listThreshold, w.listPages);
  if (listed) {
    const all = await w.port.listDeployments({ signal: w.options.signal });
    w.listPages = Math.max(1, Math.ceil(all.length / 100));
    for (const d of all) byId.set(d.id, d);
  }
  const due: Array<[string, Entry]> = [];
  for (const [id, entry] of w.pending) {
    const deployment = byId.get(id);
    if (listed && deployment) {
      if (deployment.active_revision_id === entry.revisionId) {
        w.options.onStatus?.(id, "DEPLOYED");
        finish(w, id, entry, { ...base(entry), status: "DEPLOYED" });
        continue;
      }
      // Something newer exists: read ours now to tell superseded from failed.
      if (deployment.latest_revision_id !== entry.revisionId) entry.readAt = 0;
    }
    if (entry.readAt <= now) due.push([id, entry]);
  }
  due.sort((a, b) => a[1].readAt - b[1].readAt);
  await Promise.all(
    due.slice(0, w.maxReads).map(([id, entry]) =>
      w.reads(async () => {
        if (w.pending.get(id) !== entry) return;
        const deployment = byId.get(id) ?? null;
        if (listed && !deployment && !(await w.port.getDeployment(id, { signal: w.options.signal }))) {
          return finish(w, id, entry, {
            ...base(entry),
            status: "VANISHED",
            statusMessage: "deployment was deleted",
          });
        }
        await readOne(w, id, entry, deployment);
      }),
    ),
  );
}

async function loop(w: Watcher): Promise<void> {
  // Stryker disable next-line EqualityOperator: equivalent, a round over no wait sends nothing and the check after it returns
  while (w.pending.size > 0) {
    const endAll = (status: "TIMEOUT" | "ABORTED") => {
      for (const [id, entry] of [...w.pending]) finish(w, id, entry, { ...base(entry), status });
    };
    // Stryker disable next-line ConditionalExpression: equivalent, an aborted signal fails the round's requests before they leave, and the catch below ends the waits ABORTED
    if (w.options.signal?.aborted) return endAll("ABORTED");
    if (w.clock.now() >= w.options.deadline) return endAll("TIMEOUT");
    try {
      await roundOnce(w);
    } catch (error) {
      // Stryker disable next-line ConditionalExpression: equivalent, the sleep below throws on an aborted signal and ends the waits ABORTED
      if (w.options.signal?.aborted) return endAll("ABORTED");
      // A failed round (the client already retried) is tried again after the pause below.
      void error;
    }
    if (w.pending.size === 0) return;
    w.round += 1;
    const listPause = halfJittered(w, w.round + 1, half(w, 1.5));
    const nextRead = Math.min(...[...w.pending.values()].map((e) => e.readAt));
    const until = Math.min(w.clock.now() + listPause, Math.max(nextRead, w.clock.now()), w.options.deadline);
    try {
      await w.clock.sleep(Math.max(0, until - w.clock.now()), w.options.signal);
      // Stryker disable next-line BlockStatement: equivalent, the loop's first check ends the waits ABORTED
    } catch {
      return endAll("ABORTED");
    }
  }
}

function ensureLoop(w: Watcher): void {
  if (w.running) return;
  w.running = loop(w).finally(() => {
    w.running = null;
    // Waits registered while the loop was finishing start a new one.
    if (w.pending.size > 0) ensureLoop(w);
  });
}
