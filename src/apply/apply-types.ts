import type { Clock } from "../clock.js";
import type { PlannedChange } from "../diff/plan/plan-types.js";
import type { LoadedManifest } from "../manifest/types.js";
import type { Deployment } from "../schema/deployment.js";
import type { RevisionStatus } from "../schema/revision.js";
import type { Verify } from "../schema/manifest.js";
import type { HealthStatus, ObjectStatus, SyncStatus } from "../status/status-types.js";
import type { ChecksRecord } from "../status/checks/checks-record.js";
import type { CheckRun } from "./verify/verify-stats.js";

/** Where one object ended up. */
export type ApplyOutcome =
  | "converged" // deployed (and verified) or nothing to do
  | "accepted" // --no-wait: the API accepted the request; the revision is not awaited
  | "skipped" // refused or invalid: nothing sent
  | "failed" // the request or the revision failed, or verify failed
  | "timeout" // --timeout reached while waiting
  | "interrupted"; // Ctrl-C / SIGTERM before it finished

export type VerifyResult = {
  ok: boolean;
  thread_id: string | null;
  run_id: string | null;
  message: string;
  /** Milliseconds from sending the run to its stream's first event, and to the answer's first token. */
  first_event_ms?: number | null;
  first_token_ms?: number | null;
  /** The answer's text (cut at 200 characters), when there was one. */
  answer?: string | null;
  /** The revision's checks: pass ratio, latency percentiles, failures (also kept in its status record). */
  checks?: ChecksRecord | undefined;
  /** Every run of the checks: its case, whether it passed, its total time and time to first token. */
  runs?: CheckRun[] | undefined;
  /** "verify-failed" when the checks fall below spec.verify's thresholds (or the smoke question failed). */
  code?: "verify-failed" | undefined;
};

export type ApplyResult = {
  kind: PlannedChange["kind"];
  name: string;
  action: PlannedChange["action"];
  id: string | null;
  outcome: ApplyOutcome;
  /** The revision created by this apply (or awaited, for an unfinished earlier one). */
  revision_id: string | null;
  revision_status: RevisionStatus | null;
  /** The failed revision's status_message, or why the object failed. */
  message: string | null;
  /** Set when our revision was SKIPPED and a newer one was followed to the end. */
  superseded_by: string | null;
  verify: VerifyResult | null;
  sync: SyncStatus;
  health: HealthStatus;
  elapsed_ms: number;
};

export type ApplySummary = Record<ApplyOutcome, number>;

export type ApplyReport = {
  /** "2": the --no-wait outcome is "accepted" (it was "sent", read as "requests sent"). */
  format_version: "2";
  ok: boolean;
  summary: ApplySummary;
  results: ApplyResult[];
};

/** What the engine knows about each planned object beyond the Plan itself. */
export type ApplyObject = {
  change: PlannedChange;
  /** spec.verify of the manifest, when present. */
  verify?: Verify | undefined;
  /** The manifest as loaded: a 422 from the server is mapped back to its fields (file:line:col). */
  loaded?: LoadedManifest | undefined;
  /** Digest of the manifest document (status: manifest_digest). */
  manifestDigest?: string | null | undefined;
  /**
   * internal_source: the planned content digest and how to pack it (built at the edge; it reads the
   * directory again and fails when the content is no longer the planned one).
   */
  source?: { digest: string; pack(): Promise<Uint8Array> } | undefined;
};

export type ProgressEvent = {
  kind: PlannedChange["kind"];
  name: string;
  phase: "sending" | "sent" | "waiting" | "verifying" | "done";
  revision_status?: RevisionStatus | null | undefined;
  result?: ApplyResult | undefined;
  elapsed_ms: number;
};

export type ApplyOptions = {
  clock: Clock;
  /** Wait for revisions (default true). */
  wait: boolean;
  /** Overall budget for waiting and verifying, in ms (default 20 minutes). */
  timeoutMs: number;
  /** Objects sent at once (default 16). */
  concurrency: number;
  signal?: AbortSignal | undefined;
  /** Uniform in [0, 1): jitter of the polling backoff. */
  random?: () => number;
  /** First wait between revision checks (default 1 s; tests use a few ms). */
  pollIntervalMs?: number;
  /** Ceiling of the polling backoff (default 15 s). */
  maxPollIntervalMs?: number;
  /** Live deployments by name when the caller already listed them (saves a listing). */
  live?: Map<string, Deployment> | undefined;
  /** The status store as loaded (previous fingerprints, verify thread, health). */
  previous: Map<string, ObjectStatus>;
  /** Called with every new record; the CLI saves it atomically right away. */
  record: (status: ObjectStatus) => Promise<void>;
  gitCommit: string | null;
  onProgress?: (event: ProgressEvent) => void;
  /** The agent-server URL of a deployment whose custom_url is empty (see docs/apply.md). */
  agentUrlFallback?: ((deployment: Deployment) => string | null) | undefined;
};

export const DEFAULT_TIMEOUT_MS = 20 * 60_000;
export const DEFAULT_CONCURRENCY = 16;
