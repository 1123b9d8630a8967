import type { FastifyRequest } from "fastify";
import type { Clock } from "../clock.js";

/**
 * What the local control plane's route modules (deployments, agent server, organizations) share.
 * The server (src/control-plane/server.ts) builds one per instance; no module keeps global state.
 */
export type ControlPlaneContext = {
  clock: Clock;
  mode: "saas" | "self-hosted";
  region: "us" | "eu";
  /** Seconds a simulated agent-server run takes before it answers. */
  runSeconds: number;
  /** Seconds between keep-alive comments on an idle event stream. */
  streamHeartbeatSeconds: number;
  /** Hosts, beyond loopback, that run webhooks may call (`--webhook-allow-host`). */
  webhookAllowHosts: readonly string[];
  /** Tenant of the authenticated caller; the auth hook has already answered 401/403 otherwise. */
  tenantOf(request: FastifyRequest): string;
  /** True when the deployment exists and belongs to the tenant (agent server routes answer 404 otherwise). */
  deploymentExists(tenantId: string, deploymentId: string): boolean;
  /** Durably records every pending change of every stateful module; await it before answering a write. */
  commit(): Promise<void>;
};

/** A module whose state survives restarts with --data: the server snapshots and restores it. */
export type StatefulModule = {
  /** Key of this module's state in the persisted snapshot. */
  name: string;
  snapshot(): unknown;
  restore(data: unknown): void;
};
