import type { Deployment, Organization } from "../schema/deployment.js";
import type { Revision } from "../schema/revision.js";

// What the apply engine needs from the outside world. src/apply/api/api-adapter.ts builds these from
// the real clients in src/api/; the engine itself never touches fetch, URLs or keys.

type CallOptions = { signal?: AbortSignal | undefined };

export type DeploymentsPort = {
  /** Every deployment of the tenant (all pages, 100 per page). */
  listDeployments(options?: CallOptions): Promise<Deployment[]>;
  /** null when the deployment does not exist (404). */
  getDeployment(id: string, options?: CallOptions): Promise<Deployment | null>;
  /** Exact-name lookup (pages through name_contains); null when absent. */
  findDeploymentByName(name: string, options?: CallOptions): Promise<Deployment | null>;
  /** Create; safe after ambiguous failures (looks the name up before creating again). */
  createDeployment(body: Record<string, unknown>, options?: CallOptions): Promise<Deployment>;
  /**
   * One PATCH attempt, never resent by the client after an ambiguous failure: the engine decides
   * (a resent revision-creating PATCH whose first response was lost would create a second revision).
   * Throws ApiError (src/api/errors.ts); `ambiguous` true when the server may have applied it.
   */
  patchDeploymentOnce(id: string, body: Record<string, unknown>, options?: CallOptions): Promise<Deployment>;
  getRevision(deploymentId: string, revisionId: string, options?: CallOptions): Promise<Revision>;
};

/** internal_source uploads: an upload URL and object path per call, then a PUT of the tarball to it. */
export type UploadsPort = {
  /** Safe to repeat: an unused upload URL is harmless. */
  createUploadUrl(
    deploymentId: string,
    options?: CallOptions,
  ): Promise<{ upload_url: string; object_path: string }>;
  /** PUT of the gzip tarball to the upload URL (a capability: no API key is sent with it). */
  uploadTarball(uploadUrl: string, bytes: Uint8Array, options?: CallOptions): Promise<void>;
};

export type PlatformPort = {
  patchOrganization(body: Record<string, unknown>, options?: CallOptions): Promise<Organization>;
};

export type Message = { type: string; content: unknown; id?: string };

/** The agent server of one deployment (base URL = its custom_url). */
export type AgentServerPort = {
  /** null when the thread does not exist (404), e.g. the deployment was recreated. */
  getThread(baseUrl: string, threadId: string, options?: CallOptions): Promise<{ thread_id: string } | null>;
  createThread(
    baseUrl: string,
    metadata: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<{ thread_id: string }>;
  createRun(
    baseUrl: string,
    threadId: string,
    body: { assistant_id: string; input: Record<string, unknown>; multitask_strategy: "rollback" },
    options?: CallOptions,
  ): Promise<{ run_id: string }>;
  joinRun(baseUrl: string, threadId: string, runId: string, options?: CallOptions): Promise<unknown>;
  /** Creates a run and yields its stream's events until the server ends it (see AgentServerClient). */
  streamRun(
    baseUrl: string,
    threadId: string,
    body: {
      assistant_id: string;
      input: Record<string, unknown>;
      multitask_strategy: "rollback";
      stream_mode: string[];
      on_disconnect: "cancel";
    },
    options?: CallOptions,
  ): AsyncIterable<{ event: string; data: unknown }>;
  /**
   * A stateless run (POST /runs/stream): on a temporary thread the server deletes when it ends, so
   * each check starts a fresh conversation and leaves nothing behind. Yields as streamRun.
   */
  streamStatelessRun(
    baseUrl: string,
    body: {
      assistant_id: string;
      input: Record<string, unknown>;
      stream_mode: string[];
      on_disconnect: "cancel";
    },
    options?: CallOptions,
  ): AsyncIterable<{ event: string; data: unknown }>;
  getRun(
    baseUrl: string,
    threadId: string,
    runId: string,
    options?: CallOptions,
  ): Promise<{ run_id: string; status: string } | null>;
  getState(baseUrl: string, threadId: string, options?: CallOptions): Promise<{ messages: Message[] }>;
  /** Removes the run's secrets from what an agent server said (a run's error, an answer) before it is kept. */
  redact(text: string): string;
  /**
   * Says `baseUrl` is one the control plane assigned (a gitrepo deployment's read-only custom_url),
   * not one the manifests wrote: its origin is trusted as the listed control plane that answered
   * with it, so --allow-api-origin need not name each deployment's host (docs/security.md).
   */
  assignedByControlPlane?(baseUrl: string): void;
};

export type ApplyPorts = {
  deployments: DeploymentsPort;
  /** Needed only to apply internal_source deployments. */
  uploads?: UploadsPort | undefined;
  platform?: PlatformPort | undefined;
  agentServer?: AgentServerPort | undefined;
};
