import { createAgentServerClient, type AgentServerClient } from "../../api/agent-server-client.js";
import type { ApiOptions } from "../../api/config.js";
import { createControlPlaneClient, type ControlPlaneClient } from "../../api/control-plane-client.js";
import { withOrigin } from "../../api/allowed-origins.js";
import type { HttpClientOptions } from "../../api/transport/http.js";
import { createPlatformClient, type PlatformClient } from "../../api/platform-client.js";
import { createRateLimiter } from "../../api/transport/rate-limiter.js";
import { createSecretRedactor, type SecretRedactor } from "../../api/secret-redactor.js";
import type { Clock } from "../../clock.js";
import type { DeploymentCreateRequest } from "../../schema/deployment.js";
import { PlumbError } from "../../errors.js";
import type { AgentServerPort, ApplyPorts, DeploymentsPort, PlatformPort, UploadsPort } from "../ports.js";

export type PortsOptions = {
  api: ApiOptions;
  clock: Clock;
  /** Injected transport pieces (fetch, random, limiter, onResponse, logger, retry, timeoutMs, redactor). */
  transport?: Omit<HttpClientOptions, "baseUrl" | "auth" | "clock">;
  /** An existing control plane client (e.g. the one plan used), so both share one rate budget. */
  controlPlane?: ControlPlaneClient;
  /** An existing platform client; by default one is built on the control plane's rate limiter. */
  platform?: PlatformClient;
};

/** The engine's ports plus the clients behind them, for callers that also read (plan). */
export type ClientPorts = ApplyPorts & {
  controlPlane: ControlPlaneClient;
  platformClient: PlatformClient;
  /** The run's secrets, shared by the clients: add each value resolved (the API key is in it). */
  redactor: SecretRedactor;
};

function deploymentsPort(client: ControlPlaneClient): DeploymentsPort {
  return {
    listDeployments: (o) => client.listDeployments({ signal: o?.signal }),
    getDeployment: (id, o) => client.getDeployment(id, { signal: o?.signal }),
    findDeploymentByName: (name, o) => client.findDeploymentByName(name, { signal: o?.signal }),
    createDeployment: (body, o) =>
      client.createDeployment(body as DeploymentCreateRequest, { signal: o?.signal }),
    // One attempt: the engine finds out what an ambiguous failure did (a lost response to a
    // revision-creating PATCH must not be resent).
    patchDeploymentOnce: (id, body, o) => client.patchDeploymentOnce(id, body, { signal: o?.signal }),
    getRevision: async (id, revisionId, o) => {
      const revision = await client.getRevision(id, revisionId, { signal: o?.signal });
      if (!revision) throw new PlumbError("revision-not-found", `revision ${revisionId} of ${id} not found`);
      return revision;
    },
  };
}

function uploadsPort(client: ControlPlaneClient): UploadsPort {
  return {
    createUploadUrl: (id, o) => client.createUploadUrl(id, { signal: o?.signal }),
    uploadTarball: (url, bytes, o) => client.uploadTarball(url, bytes, { signal: o?.signal }),
  };
}

/** Agent-server clients per deployment URL; joins hold a connection, so they get their own slots. */
function agentServerPort(options: PortsOptions): AgentServerPort {
  const redactor = options.transport?.redactor ?? createSecretRedactor([options.api.apiKey]);
  const limiter = createRateLimiter({ clock: options.clock, maxConcurrency: 64 });
  const clients = new Map<string, AgentServerClient>();
  const assigned = new Set<string>(); // URLs the control plane gave (assignedByControlPlane)
  const clientFor = (url: string) => {
    let client = clients.get(url);
    if (!client) {
      const allowed = options.transport?.allowedOrigins;
      client = createAgentServerClient({
        ...options.transport,
        allowedOrigins: assigned.has(url) ? withOrigin(allowed, url) : allowed,
        limiter,
        clock: options.clock,
        deploymentUrl: url,
        apiKey: options.api.apiKey,
        apiKeyFile: options.api.apiKeyFile,
        tenantId: options.api.tenantId,
      });
      clients.set(url, client);
    }
    return client;
  };
  return {
    getThread: (url, threadId, o) => clientFor(url).getThread(threadId, { signal: o?.signal }),
    createThread: (url, metadata, o) => clientFor(url).createThread(metadata, { signal: o?.signal }),
    createRun: (url, threadId, body, o) =>
      clientFor(url).createRun(threadId, body as Parameters<AgentServerClient["createRun"]>[1], {
        signal: o?.signal,
      }),
    // The verify budget (timeout_seconds) bounds the join through the signal, not the HTTP timeout.
    joinRun: (url, threadId, runId, o) =>
      clientFor(url).joinRun(threadId, runId, { signal: o?.signal, timeoutMs: 3_600_000 }),
    // Bounded by the verify budget through the signal, as the join.
    streamRun: (url, threadId, body, o) =>
      clientFor(url).streamRun(threadId, body as Parameters<AgentServerClient["streamRun"]>[1], {
        signal: o?.signal,
        timeoutMs: 3_600_000,
      }),
    streamStatelessRun: (url, body, o) =>
      clientFor(url).streamStatelessRun(body as Parameters<AgentServerClient["streamStatelessRun"]>[0], {
        signal: o?.signal,
        timeoutMs: 3_600_000,
      }),
    getRun: (url, threadId, runId, o) => clientFor(url).getRun(threadId, runId, { signal: o?.signal }),
    getState: async (url, threadId, o) => {
      const state = await clientFor(url).getState(threadId, { signal: o?.signal });
      return { messages: (state.values.messages ?? []).map((m) => ({ type: m.type, content: m.content })) };
    },
    redact: (text) => redactor.redact(text),
    assignedByControlPlane: (url) => {
      if (!clients.has(url)) assigned.add(url); // before its client is made (a made one keeps its list)
    },
  };
}

/**
 * The engine's ports over the real clients in src/api/; one client of each kind, one rate budget,
 * one secret redactor (the transport's, or a new one that knows the API key).
 */
export function createApplyPorts(given: PortsOptions): ClientPorts {
  const redactor = given.transport?.redactor ?? createSecretRedactor();
  redactor.add([given.api.apiKey]);
  // Every client refuses to send the key to an origin the allowlist does not name (an agent server's).
  const allowedOrigins = given.api.allowedOrigins;
  const options: PortsOptions = { ...given, transport: { ...given.transport, redactor, allowedOrigins } };
  const controlPlane =
    options.controlPlane ??
    createControlPlaneClient({
      ...options.transport,
      clock: options.clock,
      apiUrl: options.api.apiUrl,
      apiKey: options.api.apiKey,
      apiKeyFile: options.api.apiKeyFile,
      tenantId: options.api.tenantId,
    });
  const platformClient =
    options.platform ??
    createPlatformClient({
      ...options.transport,
      limiter: controlPlane.http.limiter,
      clock: options.clock,
      platformUrl: options.api.platformUrl,
      apiKey: options.api.apiKey,
      apiKeyFile: options.api.apiKeyFile,
      tenantId: options.api.tenantId,
    });
  const platform: PlatformPort = {
    patchOrganization: (body, o) => platformClient.patchOrganization(body, { signal: o?.signal }),
  };
  return {
    controlPlane,
    platformClient,
    redactor,
    deployments: deploymentsPort(controlPlane),
    uploads: uploadsPort(controlPlane),
    platform,
    agentServer: agentServerPort(options),
  };
}
