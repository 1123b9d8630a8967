import type { Logger } from "pino";
import type { Clock } from "../clock.js";
import type { FaultSpec } from "./http/faults.js";
import type { WrapJournalFile } from "./storage/persistence.js";
import type { RateLimitOverrides } from "./access/rate-limit.js";

/** An API key and the tenants it can reach (several tenants: callers must send X-Tenant-Id). */
export type ApiKeyGrant = { key: string; tenants: string[] };
/**
 * A listener of `GET /v2/listeners`. `compute_type` is `k8s` for the default one; spec 2.2 validates
 * `listener_config` "by the compute type of the listener" and names only `k8s`, so a listener of
 * another type (configurable for tests) refuses `listener_config.k8s_namespace`.
 */
export type Listener = { id: string; compute_type: string; compute_id: string };
export type Integration = { id: string; installation_id: string; name: string };

/** The key a local control plane accepts when none is configured; it is not a secret. */
export const DEFAULT_API_KEY = "plumb-local-key";
export const DEFAULT_TENANT_ID = "00000000-0000-4000-8000-000000000000";
export const DEFAULT_LISTENER_ID = "10000000-0000-4000-8000-000000000001";
export const DEFAULT_INTEGRATION_ID = "20000000-0000-4000-8000-000000000001";

export type ControlPlaneOptions = {
  host: string;
  port: number;
  /** Directory of the durable store; undefined keeps state in memory only. */
  dataDir: string | undefined;
  mode: "saas" | "self-hosted";
  region: "us" | "eu";
  apiKeys: ApiKeyGrant[];
  /** Seconds each revision state lasts; 0 makes every transition immediate on the next read. */
  revisionSeconds: number;
  /** Seconds a simulated agent-server run takes. */
  runSeconds: number;
  /** Seconds between `: heartbeat` comments on an idle agent-server event stream. */
  streamHeartbeatSeconds: number;
  /**
   * Host names (or IP addresses) beyond loopback that agent-server run webhooks may call, matched
   * exactly against the URL's host, case-insensitively (`--webhook-allow-host`); default none.
   */
  webhookAllowHosts: string[];
  /** Seconds a deployment stays AWAITING_DATABASE (and AWAITING_DELETE after a delete). */
  deploymentReadySeconds: number;
  faults: FaultSpec | undefined;
  faultSeed: number;
  rateLimits: RateLimitOverrides;
  /** Failed authentications allowed per client address and window before 429 (default 100 / 10 s). */
  authFailureLimit?: { count: number; intervalSeconds: number } | undefined;
  /** Maximum JSON body size in bytes (413 above it). */
  bodyLimit: number;
  /** Time to receive a whole request, headers and body (408 and closed past it); default 300 s. */
  requestTimeoutMs: number;
  /** Connections open at once; one more is closed unanswered as it arrives (default 512). */
  maxConnections: number;
  /** Connections open at once from one client address; one more is closed as it arrives (default 256). */
  maxConnectionsPerAddress: number;
  /** Time a kept-alive connection may wait idle for its next request before it is closed (default 5 s). */
  keepAliveTimeoutMs: number;
  clock: Clock;
  logger: Logger | false;
  listeners: Listener[];
  integrations: Integration[];
  /**
   * Self-hosted only: false turns JIT provisioning off for every organization (spec 5.4 rule 6).
   * The CLI reads SELF_HOSTED_JIT_PROVISIONING_ENABLED into it; the library never reads the env.
   */
  selfHostedJitProvisioningEnabled: boolean;
  /** Tests: wrap the journal's file (with `dataDir`) to inject write failures such as ENOSPC. */
  wrapJournalFile: WrapJournalFile | undefined;
};

export const DEFAULT_LISTENERS: Listener[] = [
  { id: DEFAULT_LISTENER_ID, compute_type: "k8s", compute_id: "local-cluster" },
];
export const DEFAULT_INTEGRATIONS: Integration[] = [
  { id: DEFAULT_INTEGRATION_ID, installation_id: "1000001", name: "local-git" },
];
