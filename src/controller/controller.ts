import { Cron } from "croner";
import type { ApiOptions } from "../api/config.js";
import type { ResponseEvent } from "../api/http.js";
import { createControlPlaneClient } from "../api/control-plane-client.js";
import { createPlatformClient } from "../api/platform-client.js";
import { type Clock, systemClock } from "../clock.js";
import { PlumbError } from "../errors.js";
import type { Logger } from "../logger.js";
import { loadManifests } from "../manifest/load.js";
import { createApplyPorts } from "../reconcile/api-adapter.js";
import { agentUrlFallback } from "../reconcile/session.js";
import {
  loadStatus,
  publishStatus,
  resolveStatusDir,
  type StatusLocation,
} from "../reconcile/status-source.js";
import { saveObjectStatus } from "../reconcile/status-store.js";
import { type ObjectStatus, statusKey } from "../reconcile/status-types.js";
import type { Deployment } from "../schema/deployment.js";
import { buildSnapshot, type DesiredSnapshot, diffSnapshots, emptySnapshot } from "./desired.js";
import { watchDirectory, type DirectoryWatcher } from "./directory-source.js";
import { type GitSource, openGitSource, redactUrl } from "./git-source.js";
import { type ControllerHttp, startControllerHttp } from "./http-server.js";
import { createControllerMetrics } from "./metrics.js";
import { reconcileObject } from "./reconcile-object.js";
import type { WorkItem } from "./schedule.js";
import { startWorkQueue, systemTimers, type Timers } from "./work-queue.js";

export type ControllerSource =
  | { kind: "dir"; dir: string }
  | {
      kind: "git";
      url: string;
      branch: string;
      path?: string | undefined;
      workDir: string;
      intervalMs: number;
    };

export type ControllerOptions = {
  source: ControllerSource;
  api: ApiOptions;
  statusDir?: string | undefined;
  statusBranch?: string | undefined;
  listen?: { host: string; port: number } | undefined;
  webhookSecret?: string | undefined;
  /** Cron expression of drift checks; undefined: none. */
  driftSchedule?: string | undefined;
  selfHeal: boolean;
  concurrency: number;
  /** Quiet time after the last file event before rescanning. */
  debounceMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Budget of one object's wait for DEPLOYED and verify. */
  timeoutMs: number;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
  timers?: Timers;
  fetch?: typeof fetch;
};

export type ControllerStatusJson = {
  ready: boolean;
  source: { kind: string; location: string; commit: string | null };
  objects: ObjectStatus[];
  invalid: Array<{
    file: string;
    problems: Array<{ line: number; column: number; code: string; message: string }>;
  }>;
  queue: { pending: number; running: number; backingOff: number };
};

export type Controller = {
  /** URL of the HTTP endpoints, when --listen was given. */
  url: string | undefined;
  manifestRoot: string;
  ready(): boolean;
  status(): ControllerStatusJson;
  /** Re-reads the manifests now (a file event or a git fetch does this). */
  rescan(): Promise<void>;
  /** Fetches the git remote (or rescans the directory) and reconciles what changed. */
  sync(): Promise<void>;
  /** One drift check of every object, as the schedule runs it. */
  checkDrift(): Promise<void>;
  /** Stops taking work, lets running reconciles finish (aborting them after graceMs), saves status. */
  stop(graceMs?: number): Promise<void>;
};

export async function startController(options: ControllerOptions): Promise<Controller> {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const log = options.logger;
  const statuses = new Map<string, ObjectStatus>();
  let snapshot: DesiredSnapshot = emptySnapshot();
  let stopping = false;

  const metrics = createControllerMetrics({
    statuses: () => statuses.values(),
    invalidFiles: () => snapshot.invalid.size,
    queue: () => queue.stats(),
  });
  const transport = {
    onResponse: (e: ResponseEvent) => metrics.onResponse(e),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const controlPlane = createControlPlaneClient({ ...options.api, ...transport, clock });
  const ports = createApplyPorts({ api: options.api, clock, transport, controlPlane });
  const platform = createPlatformClient({
    ...transport,
    clock,
    limiter: controlPlane.http.limiter,
    platformUrl: options.api.platformUrl,
    apiKey: options.api.apiKey,
    tenantId: options.api.tenantId,
  });

  // The source: a directory as it is, or a shallow checkout of a git branch.
  let git: GitSource | undefined;
  let manifestRoot: string;
  let repoRoot: string;
  if (options.source.kind === "git") {
    git = await openGitSource({ ...options.source, env: options.env });
    manifestRoot = git.manifestRoot;
    repoRoot = git.checkoutDir;
    log.info(
      { repo: redactUrl(options.source.url), branch: options.source.branch, revision: git.commit() },
      "checked out",
    );
  } else {
    manifestRoot = options.source.dir;
    repoRoot = options.source.dir;
  }
  const gitCommit = () => git?.commit() ?? null;
  const location: StatusLocation = {
    root: repoRoot,
    statusDir: options.statusDir,
    statusBranch: options.statusBranch,
  };
  const statusDir = resolveStatusDir(location);
  const loaded = await loadStatus(location);
  for (const problem of loaded.problems)
    log.warn({ file: problem.file, reason: problem.message }, "ignoring status file");
  for (const [key, status] of loaded.objects) statuses.set(key, status);

  // Status: every record is written atomically as soon as it is known (a kill -9 loses nothing recorded).
  let publishTimer: (() => void) | undefined;
  let publishing: Promise<void> = Promise.resolve();
  const publish = () => {
    publishTimer = undefined;
    publishing = publishing
      .then(() => publishStatus(location, "plumb controller: status"))
      .then(
        () => undefined,
        (error: unknown) => log.error({ err: errorMessage(error) }, "status branch not published"),
      );
    return publishing;
  };
  const record = async (status: ObjectStatus) => {
    statuses.set(statusKey(status.kind, status.name), status);
    await saveObjectStatus(statusDir, status);
    if (options.statusBranch && !publishTimer) publishTimer = timers.setTimeout(() => void publish(), 2_000);
  };

  // Drift sweeps and the first reconcile list live once; their items use that listing instead of a lookup each.
  let listed = new Map<string, Deployment>();
  const useListing = new Set<string>();
  const listLive = async () => {
    try {
      listed = new Map((await controlPlane.listDeployments()).map((d) => [d.name, d]));
      return true;
    } catch (error) {
      log.error({ err: errorMessage(error) }, "cannot list deployments; objects are looked up one by one");
      return false;
    }
  };

  const initial = new Set<string>();
  let scanned = false;
  const ready = () => scanned && initial.size === 0;

  const worker = async (item: WorkItem, signal: AbortSignal): Promise<boolean> => {
    const entry = snapshot.objects.get(item.key);
    if (!entry) return true; // removed from the manifests (or now invalid) since it was queued
    const { manifest } = entry.loaded;
    const previous = statuses.get(item.key);
    const bindings = {
      kind: manifest.kind,
      name: manifest.metadata.name,
      id: previous?.id ?? null,
      revision: previous?.latest_revision_id ?? null,
      commit: gitCommit(),
    };
    const itemLog = log.child(bindings);
    const known = useListing.delete(item.key) ? (listed.get(manifest.metadata.name) ?? null) : undefined;
    const started = clock.now();
    try {
      const outcome = await reconcileObject(
        {
          root: manifestRoot,
          env: options.env,
          clock,
          ports,
          platform,
          statuses,
          record,
          gitCommit,
          selfHeal: options.selfHeal,
          timeoutMs: options.timeoutMs,
          pollIntervalMs: options.pollIntervalMs,
          maxPollIntervalMs: options.maxPollIntervalMs,
          agentUrlFallback: agentUrlFallback(options.api.apiUrl),
        },
        entry.loaded,
        item.reason,
        itemLog,
        signal,
        known,
      );
      const after = statuses.get(item.key);
      metrics.reconciled(item.reason, outcome.result, (clock.now() - started) / 1000);
      if (outcome.drift) metrics.driftDetected(manifest.kind, outcome.drift);
      const fields = {
        id: after?.id ?? bindings.id,
        revision: after?.latest_revision_id ?? bindings.revision,
        reason: item.reason,
        attempt: item.attempt,
        action: outcome.action,
        result: outcome.result,
        sync: after?.sync,
        health: after?.health,
        elapsed_ms: clock.now() - started,
      };
      if (outcome.ok && outcome.result !== "skipped") itemLog.info(fields, "reconciled");
      else
        itemLog.warn(
          {
            ...fields,
            error: outcome.apply?.message ?? null,
            failures: queue.failures(item.key) + (outcome.ok ? 0 : 1),
          },
          "reconcile did not converge",
        );
      return outcome.ok;
    } catch (error) {
      metrics.reconciled(item.reason, "error", (clock.now() - started) / 1000);
      itemLog.error(
        { reason: item.reason, attempt: item.attempt, err: errorMessage(error) },
        "reconcile failed",
      );
      if (previous && !signal.aborted)
        await record({
          ...previous,
          last_error: errorMessage(error),
          updated_at: new Date(clock.now()).toISOString(),
        });
      return false;
    } finally {
      if (initial.delete(item.key) && ready())
        log.info({ objects: snapshot.objects.size }, "first reconcile finished: ready");
    }
  };

  const queue = startWorkQueue({
    concurrency: options.concurrency,
    debounceMs: 0, // file events are debounced before the rescan
    backoffBaseMs: options.backoffBaseMs,
    backoffMaxMs: options.backoffMaxMs,
    timers,
    worker,
  });

  const reportInvalid = () => {
    for (const [file, problems] of snapshot.invalid)
      for (const p of problems)
        log.error(
          { file, line: p.line, column: p.column, code: p.code, field: p.field, problem: p.message },
          "invalid manifest: not reconciled until fixed",
        );
  };

  // Rescans run one at a time; a request during a scan runs one more scan after it.
  let scanning: Promise<void> | null = null;
  let rescanAgain = false;
  const scanOnce = async (source: string) => {
    let next: DesiredSnapshot;
    try {
      next = buildSnapshot(await loadManifests(manifestRoot));
    } catch (error) {
      metrics.scanned(source, "error");
      log.error({ err: errorMessage(error) }, "cannot read the manifests");
      return;
    }
    const changes = diffSnapshots(snapshot, next);
    const before = snapshot;
    snapshot = next;
    metrics.scanned(source, next.invalid.size > 0 ? "invalid" : "ok");
    if (changes.problemsChanged) reportInvalid();
    for (const key of changes.removed) {
      queue.cancel(key);
      const file = before.objects.get(key)?.loaded.file;
      const problems = file ? next.invalid.get(file) : undefined;
      const previous = statuses.get(key);
      if (problems && previous) {
        // Its manifest broke: say so in its status until it is fixed.
        const first = problems[0]!;
        await record({
          ...previous,
          sync: "Failed",
          last_error: `invalid manifest ${first.file}:${first.line}:${first.column}: ${first.message}`,
          updated_at: new Date(clock.now()).toISOString(),
        });
      }
      log.info(
        { object: key },
        problems ? "manifest now invalid: not reconciled" : "manifest removed: no longer reconciled",
      );
    }
    for (const key of changes.changed) {
      useListing.delete(key);
      queue.enqueue(key, "change");
    }
    if (changes.changed.length > 0)
      log.info({ changed: changes.changed.length, revision: gitCommit() }, "manifests changed");
  };
  const rescan = (source = "scan"): Promise<void> => {
    if (scanning) {
      rescanAgain = true;
      return scanning;
    }
    scanning = (async () => {
      do {
        rescanAgain = false;
        await scanOnce(source);
      } while (rescanAgain && !stopping);
    })().finally(() => (scanning = null));
    return scanning;
  };

  const sync = async (trigger: string) => {
    if (stopping) return;
    if (!git) return rescan(trigger);
    try {
      const moved = await git.fetch();
      if (moved) {
        log.info({ revision: git.commit(), trigger }, "new commit");
        await rescan(trigger);
      }
    } catch (error) {
      metrics.scanned(trigger, "error");
      log.error({ err: errorMessage(error), trigger }, "git fetch failed");
    }
  };

  const checkDrift = async () => {
    if (stopping || !ready()) return;
    if (snapshot.invalid.size > 0) reportInvalid();
    if (await listLive()) {
      for (const key of snapshot.objects.keys()) useListing.add(key);
      // Managed earlier, still live, gone from git: reported, never deleted.
      for (const [key, status] of statuses) {
        if (snapshot.objects.has(key) || status.kind !== "Deployment" || !listed.has(status.name)) continue;
        if (snapshot.invalid.size > 0) continue; // it may be in a broken file
        metrics.driftDetected(status.kind, "removed-from-git");
        log.warn(
          { kind: status.kind, name: status.name, id: status.id },
          "drift detected: live deployment no longer in git",
        );
      }
    }
    for (const key of snapshot.objects.keys()) queue.enqueue(key, "drift");
  };

  // First reconcile: everything in git, against one listing of live.
  const listedAtStart = await listLive();
  await rescan("start");
  for (const key of snapshot.objects.keys()) {
    initial.add(key);
    if (listedAtStart) useListing.add(key);
  }
  scanned = true;
  if (ready()) log.info({ objects: 0 }, "nothing to reconcile: ready");

  // Triggers: file events (debounced), git polling, the webhook, the drift schedule.
  let watcher: DirectoryWatcher | undefined;
  let debounceTimer: (() => void) | undefined;
  if (options.source.kind === "dir") {
    watcher = watchDirectory(
      manifestRoot,
      () => {
        debounceTimer?.();
        debounceTimer = timers.setTimeout(() => void rescan("watch"), options.debounceMs);
      },
      (error) => log.error({ err: error.message }, "file watcher error"),
    );
    await watcher.ready;
  }
  let pollTimer: NodeJS.Timeout | undefined;
  if (options.source.kind === "git") {
    pollTimer = setInterval(() => void sync("poll"), options.source.intervalMs);
    pollTimer.unref();
  }
  const cron = options.driftSchedule
    ? new Cron(options.driftSchedule, { protect: true }, () => checkDrift())
    : undefined;

  const statusJson = (): ControllerStatusJson => ({
    ready: ready(),
    source:
      options.source.kind === "git"
        ? { kind: "git", location: redactUrl(options.source.url), commit: gitCommit() }
        : { kind: "dir", location: manifestRoot, commit: null },
    objects: [...statuses.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    invalid: [...snapshot.invalid].map(([file, problems]) => ({
      file,
      problems: problems.map((p) => ({ line: p.line, column: p.column, code: p.code, message: p.message })),
    })),
    queue: queue.stats(),
  });

  let http: ControllerHttp | undefined;
  if (options.listen) {
    http = await startControllerHttp(options.listen, {
      ready,
      registry: metrics.registry,
      status: statusJson,
      webhookSecret: options.webhookSecret,
      onWebhook: () => {
        log.info({}, "webhook received: fetching now");
        void sync("webhook");
      },
      onBadWebhook: () => {
        metrics.scanned("webhook", "error");
        log.warn({}, "webhook rejected: bad signature");
      },
    });
    log.info({ url: http.url }, "serving /healthz /readyz /metrics /status");
  }

  return {
    url: http?.url,
    manifestRoot,
    ready,
    status: statusJson,
    rescan: () => rescan("manual"),
    sync: () => sync("manual"),
    checkDrift,
    async stop(graceMs = 10_000) {
      if (stopping) return;
      stopping = true;
      log.info({ grace_ms: graceMs }, "stopping: no new work");
      cron?.stop();
      if (pollTimer) clearInterval(pollTimer);
      debounceTimer?.();
      await watcher?.close();
      await scanning;
      const finished = await queue.stop(graceMs);
      if (!finished) log.warn({}, "some reconciles did not finish in time; they resume on the next start");
      publishTimer?.();
      if (options.statusBranch) await publish();
      await publishing;
      await http?.close();
      await git?.close();
      log.info({ objects: statuses.size }, "stopped; status saved");
    },
  };
}

function errorMessage(error: unknown): string {
  if (error instanceof PlumbError) return `${error.message} [${error.code}]`;
  return error instanceof Error ? error.message : String(error);
}
