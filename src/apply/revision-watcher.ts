import pLimit from "p-limit";
import { type Backoff, backoffCeiling, backoffDelay, type Clock } from "../clock.js";
import type { Deployment } from "../schema/deployment.js";
import { FAILED_REVISION_STATUSES, type RevisionStatus } from "../schema/revision.js";
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
  const { clock, random } = options;
  const pending = new Map<string, Entry>();
  const listThreshold = options.listThreshold ?? 4;
  const maxReads = options.maxReadsPerRound ?? 50;
  const reads = pLimit(8);
  let running: Promise<void> | null = null;
  let round = 0;
  // Pages a listing costs; listing pays off only when more waits are open than that.
  let listPages = 1;

  // Reads (doubling) and listings (x1.5 per round) back off from the poll interval: half of each
  // ceiling is fixed, the other half full jitter, so a wait is never under half its ceiling.
  const half = (factor: number): Backoff => ({
    baseMs: options.pollIntervalMs / 2,
    maxMs: options.maxPollIntervalMs / 2,
    factor,
  });
  const halfJittered = (attempt: number, backoff: Backoff) =>
    Math.floor(backoffCeiling(attempt, backoff)) + backoffDelay(attempt, backoff, random);
  const readDelay = (n: number) => halfJittered(n + 1, half(2));

  const finish = (id: string, entry: Entry, wait: Omit<RevisionWait, "supersededBy">) => {
    pending.delete(id);
    entry.resolve({ ...wait, supersededBy: entry.supersededBy });
  };

  const follow = (id: string, entry: Entry, latest: string) => {
    entry.supersededBy = latest;
    entry.revisionId = latest;
    entry.follows += 1;
    entry.readAt = 0;
    entry.reads = 0;
  };

  async function readOne(id: string, entry: Entry, deployment: Deployment | null): Promise<void> {
    const revision = await port.getRevision(id, entry.revisionId, { signal: options.signal });
    entry.reads += 1;
    options.onStatus?.(id, revision.status);
    if (revision.status === "DEPLOYED") return finish(id, entry, { ...base(entry), status: "DEPLOYED" });
    if (FAILED_REVISION_STATUSES.includes(revision.status)) {
      return finish(id, entry, {
        ...base(entry),
        status: revision.status,
        statusMessage: revision.status_message,
      });
    }
    if (revision.status === "SKIPPED") {
      // Superseded: the newer revision carries our configuration too (a PATCH merges into the
      // deployment), so follow it to the end instead of failing.
      const current = deployment ?? (await port.getDeployment(id, { signal: options.signal }));
      const latest = current?.latest_revision_id;
      if (latest && latest !== entry.revisionId && entry.follows < MAX_FOLLOWS)
        return follow(id, entry, latest);
      return finish(id, entry, { ...base(entry), status: "SKIPPED", statusMessage: revision.status_message });
    }
    entry.readAt = clock.now() + readDelay(entry.reads);
  }

  const base = (entry: Entry) => ({ revisionId: entry.revisionId, statusMessage: null });

  async function roundOnce(): Promise<void> {
    const now = clock.now();
    const byId = new Map<string, Deployment>();
    const listed = pending.size > Math.max(listThreshold, listPages);
    if (listed) {
      const all = await port.listDeployments({ signal: options.signal });
      listPages = Math.max(1, Math.ceil(all.length / 100));
      for (const d of all) byId.set(d.id, d);
    }
    const due: Array<[string, Entry]> = [];
    for (const [id, entry] of pending) {
      const deployment = byId.get(id);
      if (listed && deployment) {
        if (deployment.active_revision_id === entry.revisionId) {
          options.onStatus?.(id, "DEPLOYED");
          finish(id, entry, { ...base(entry), status: "DEPLOYED" });
          continue;
        }
        // Something newer exists: read ours now to tell superseded from failed.
        if (deployment.latest_revision_id !== entry.revisionId) entry.readAt = 0;
      }
      if (entry.readAt <= now) due.push([id, entry]);
    }
    due.sort((a, b) => a[1].readAt - b[1].readAt);
    await Promise.all(
      due.slice(0, maxReads).map(([id, entry]) =>
        reads(async () => {
          if (pending.get(id) !== entry) return;
          const deployment = byId.get(id) ?? null;
          if (listed && !deployment && !(await port.getDeployment(id, { signal: options.signal }))) {
            return finish(id, entry, {
              ...base(entry),
              status: "VANISHED",
              statusMessage: "deployment was deleted",
            });
          }
          await readOne(id, entry, deployment);
        }),
      ),
    );
  }

  async function loop(): Promise<void> {
    // Stryker disable next-line EqualityOperator: equivalent, a round over no wait sends nothing and the check after it returns
    while (pending.size > 0) {
      const endAll = (status: "TIMEOUT" | "ABORTED") => {
        for (const [id, entry] of [...pending]) finish(id, entry, { ...base(entry), status });
      };
      // Stryker disable next-line ConditionalExpression: equivalent, an aborted signal fails the round's requests before they leave, and the catch below ends the waits ABORTED
      if (options.signal?.aborted) return endAll("ABORTED");
      if (clock.now() >= options.deadline) return endAll("TIMEOUT");
      try {
        await roundOnce();
      } catch (error) {
        // Stryker disable next-line ConditionalExpression: equivalent, the sleep below throws on an aborted signal and ends the waits ABORTED
        if (options.signal?.aborted) return endAll("ABORTED");
        // A failed round (the client already retried) is tried again after the pause below.
        void error;
      }
      if (pending.size === 0) return;
      round += 1;
      const listPause = halfJittered(round + 1, half(1.5));
      const nextRead = Math.min(...[...pending.values()].map((e) => e.readAt));
      const until = Math.min(clock.now() + listPause, Math.max(nextRead, clock.now()), options.deadline);
      try {
        await clock.sleep(Math.max(0, until - clock.now()), options.signal);
        // Stryker disable next-line BlockStatement: equivalent, the loop's first check ends the waits ABORTED
      } catch {
        return endAll("ABORTED");
      }
    }
  }

  const ensureLoop = (): void => {
    if (running) return;
    running = loop().finally(() => {
      running = null;
      // Waits registered while the loop was finishing start a new one.
      if (pending.size > 0) ensureLoop();
    });
  };

  return {
    /** Resolves when the revision is DEPLOYED, failed, superseded to the end, timed out or aborted. */
    wait(deploymentId: string, revisionId: string): Promise<RevisionWait> {
      return new Promise((resolve) => {
        const readAt = clock.now() + readDelay(0);
        pending.set(deploymentId, { revisionId, supersededBy: null, follows: 0, readAt, reads: 0, resolve });
        ensureLoop();
      });
    },
  };
}
