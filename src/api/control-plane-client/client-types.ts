import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  Page,
} from "../../schema/deployment.js";
import type { Revision } from "../../schema/revision.js";
import type { HttpClient, HttpClientOptions } from "../transport/http.js";
import type { Integration, Listener, UploadUrl } from "../shapes.js";

// What a control plane client offers, and the settings it is made with.

/** Connection settings (see config.ts) plus the transport's injectables (fetch, clock, limiter, hooks). */
export type ControlPlaneClientOptions = Omit<HttpClientOptions, "baseUrl" | "auth"> & {
  apiUrl: string;
  apiKey: string;
  tenantId?: string | undefined;
  /** Page size of list calls; the API's maximum is 100. */
  pageSize?: number;
  /** POST attempts when the outcome of the previous one is unknown; default 8 (as apply's PATCH). */
  createAttempts?: number;
};

export type CallOptions = { signal?: AbortSignal };

export type ControlPlaneClient = {
  /** Every deployment (optionally whose name contains `nameContains`, case-sensitive), paging by 100. */
  listDeployments(query?: { nameContains?: string } & CallOptions): Promise<Deployment[]>;
  /** Every deployment, one page (100) at a time: for callers that keep less than the whole list. */
  deploymentPages(options?: CallOptions): AsyncIterable<Deployment[]>;
  listDeploymentsPage(
    query: { limit?: number; offset?: number; nameContains?: string } & CallOptions,
  ): Promise<Page<Deployment>>;
  /** The deployment named exactly `name`, or null; pages through every `name_contains` match. */
  findDeploymentByName(name: string, options?: CallOptions): Promise<Deployment | null>;
  /** null when it does not exist (404). */
  getDeployment(id: string, options?: CallOptions): Promise<Deployment | null>;
  /** Creates once, even when a response is lost: after an ambiguous failure it looks the name up first. */
  createDeployment(body: DeploymentCreateRequest, options?: CallOptions): Promise<Deployment>;
  /**
   * Retried after ambiguous failures only when the body changes fields in place (absolute values, so
   * a resend is harmless). A revision-creating body gets one attempt (429 and never-sent excepted):
   * on an ambiguous ApiError the caller checks `latest_revision_id` before sending it again.
   */
  patchDeployment(id: string, body: DeploymentPatchRequest, options?: CallOptions): Promise<Deployment>;
  /**
   * One attempt (429 and never-sent excepted), whatever the body: for a caller that finds out itself
   * what an ambiguous failure did. Throws ApiError with `ambiguous` true when the server may have
   * applied it (timeout, reset, lost response, 5xx).
   */
  patchDeploymentOnce(id: string, body: DeploymentPatchRequest, options?: CallOptions): Promise<Deployment>;
  /** true when deleted, false when it was already gone (404). */
  deleteDeployment(id: string, options?: CallOptions): Promise<boolean>;
  /** One page of revisions, newest first. */
  listRevisions(
    id: string,
    query?: { limit?: number; offset?: number } & CallOptions,
  ): Promise<Page<Revision>>;
  getRevision(id: string, revisionId: string, options?: CallOptions): Promise<Revision | null>;
  createUploadUrl(id: string, options?: CallOptions): Promise<UploadUrl>;
  uploadTarball(uploadUrl: string, bytes: Uint8Array, options?: CallOptions): Promise<void>;
  listListeners(options?: CallOptions): Promise<Listener[]>;
  listIntegrations(options?: CallOptions): Promise<Integration[]>;
  /**
   * The installation's mode as a plumb control plane reports it on GET /info; null when the server
   * does not answer it (a hosted service need not serve /info) or answers something else.
   */
  getServerMode(options?: CallOptions): Promise<"saas" | "self-hosted" | null>;
  readonly http: HttpClient;
};
