import type { ApiOptions } from "../api/config.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { LoadedEnvironment } from "../manifest/types.js";
import type { ObjectStatus } from "../status/status-types.js";
import type { Timers } from "./queue/work-queue.js";

// The controller's public shapes: what starts it, what it answers on /status, what it returns.

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
  /** --listen; `allowedHosts`: the names it answers besides the listen host and localhost (421 otherwise). */
  listen?: { host: string; port: number; allowedHosts?: readonly string[] | undefined } | undefined;
  /** Bearer token GET /status requires (PLUMB_STATUS_TOKEN / --status-token-file); undefined: open. */
  statusToken?: string | undefined;
  /** State lock lease: a standby takes over this long after the leader stops renewing (default 30 s). */
  lockLeaseMs?: number | undefined;
  /** Aborts a controller still waiting on standby (SIGTERM before it led). */
  signal?: AbortSignal | undefined;
  webhookSecret?: string | undefined;
  /** Cron expression of drift checks; undefined: none. */
  driftSchedule?: string | undefined;
  selfHeal: boolean;
  /** After each drift check, write drifted fields back to this branch of the git source (drift-branch.ts). */
  driftBranch?: string | undefined;
  /**
   * With environments: an environment whose spec.promotion.auto is true gets its promotions opened
   * on branch PREFIX + its name of the git source after each drift check (promotion-branch.ts).
   */
  promoteBranchPrefix?: string | undefined;
  /** Delete managed deployments whose manifests were removed (prune-sweep.ts); default off. */
  prune?: boolean | undefined;
  /** At most this many prune deletions per pruneWindowMs (default 5), counted in the prune ledger. */
  pruneMax?: number | undefined;
  /** The window pruneMax counts in (default 1h). */
  pruneWindowMs?: number | undefined;
  /** A removal is deleted only once seen in two scans at least this far apart (default 30s). */
  pruneDelayMs?: number | undefined;
  concurrency: number;
  /** Quiet time after the last file event before rescanning. */
  debounceMs: number;
  /**
   * --settle: a directory's scan uses a file only once it has been unchanged this long
   * (snapshot/read-at-rest.ts); default FILE_SETTLE_MS.
   */
  settleMs?: number | undefined;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Budget of one object's wait for DEPLOYED and verify. */
  timeoutMs: number;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
  /**
   * Requests per window the controller may send with its key (the client-side limiter keeps under
   * it); default the spec's "Default (API key)" category, 1000 per 10 s. Raise it only when the
   * control plane grants the key more.
   */
  apiRateLimit?: { limit: number; windowMs: number } | undefined;
  /**
   * --notify: POST one JSON event per outcome to each URL (notifier.ts); `secret` signs them,
   * `pageUrl` is the status page as people reach it (default: the --listen address).
   */
  notify?:
    | { urls: string[]; secret?: string | undefined; pageUrl?: string | undefined; backoffBaseMs?: number }
    | undefined;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
  timers?: Timers;
  fetch?: typeof fetch;
};

/**
 * What starts a controller: ControllerOptions, except that the API settings may be read late (the
 * CLI defers them: a tree with environments takes each environment's from its Environment), plus
 * the environment settings (docs/environments.md "The controller").
 */
export type ControllerStartOptions = Omit<ControllerOptions, "api"> & {
  api: ApiOptions | (() => ApiOptions);
  /** --env NAME (repeatable): the environments reconciled; none given: every one. */
  environments?: readonly string[] | undefined;
  /** An Environment's API settings (its api_url, api_key, … read from the variables or files it names). */
  environmentApi?: ((environment: LoadedEnvironment, root: string) => ApiOptions) | undefined;
  /** This replica's name in the replicas' heartbeats (default: host, pid and a random part). */
  replicaId?: string | undefined;
};

/** A status record as /status shows it: no secret fingerprints, not even salted ones. */
export type PublicObjectStatus = Omit<ObjectStatus, "secret_fingerprints" | "pending"> & {
  /** With environments: the environment whose store holds it. */
  environment?: string;
};

export type EnvironmentStatusJson = {
  environment: string;
  /** leader: reconciled here; standby: another replica holds its lock; failed: could not start here. */
  role: "leader" | "standby" | "starting" | "failed";
  /** Who holds its lock when this replica stands by. */
  leader?: string | undefined;
  /** Why it could not start (role failed), e.g. its api_key variable is not set. */
  error?: string | undefined;
  /**
   * Its Environment document in git is invalid (file:line: message): the last valid one still runs,
   * until the document is fixed.
   */
  invalid?: string | undefined;
  /** Its manifests are loaded (role leader). */
  ready: boolean;
  /** Every object of its first scan was reconciled once (role leader). */
  settled: boolean;
  objects: number;
};

export type ControllerStatusJson = {
  /** /readyz: the leader has loaded its manifests (whatever the control plane's state). */
  ready: boolean;
  /** Every object of the first scan has been reconciled once, successfully or not. */
  settled: boolean;
  source: { kind: string; location: string; commit: string | null };
  objects: PublicObjectStatus[];
  invalid: Array<{
    file: string;
    problems: Array<{ line: number; column: number; code: string; message: string }>;
  }>;
  queue: { pending: number; running: number; backingOff: number };
  /**
   * With environments: each one's role on this replica and its own status (the fields above are
   * then the sum of those this replica leads, each object with its `environment`).
   */
  environments?: EnvironmentStatusJson[];
  /** With environments: this replica's name, the live replicas it sees, and its share of the environments. */
  replicas?: { self: string; live: number; share: number };
};

export type Controller = {
  /** URL of the HTTP endpoints, when --listen was given. */
  url: string | undefined;
  manifestRoot: string;
  /** True once every object of the first scan was reconciled once (later than /readyz's ready). */
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
  /** Aborted when the state lock was lost while leading: the caller stops (exit 1) and restarts as standby. */
  lockLost: AbortSignal;
};
