import type { Clock } from "../../src/clock.js";
import type { ControlPlaneOptions } from "../../src/control-plane/options.js";
import {
  DEFAULT_API_KEY,
  DEFAULT_INTEGRATION_ID,
  DEFAULT_LISTENER_ID,
} from "../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../src/control-plane/server.js";

/** A clock the test moves by hand; sleep resolves at once. */
export class ManualClock implements Clock {
  constructor(public t = Date.parse("2025-01-01T00:00:00Z")) {}
  now = () => this.t;
  sleep = async () => undefined;
  advance(seconds: number) {
    this.t += seconds * 1000;
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by assertions
type Json = any;

export type Api = {
  cp: RunningControlPlane;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json; headers: Headers }>;
};

export async function start(options: Partial<ControlPlaneOptions> = {}): Promise<Api> {
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...options });
  return {
    cp,
    async call(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { "x-api-key": DEFAULT_API_KEY, ...headers } };
      if (body !== undefined) {
        init.body = typeof body === "string" ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] ??= "application/json";
      }
      const response = await fetch(`${cp.url}${path}`, init);
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
  };
}

export const gitrepo = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: "gitrepo",
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: "https://git.example.com/acme/agent",
    deployment_type: "dev",
  },
  source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
  secrets: [{ name: "OPENAI_API_KEY", value: "sk-secret" }],
  ...extra,
});

export const container = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: "external_container",
  source_config: { listener_id: DEFAULT_LISTENER_ID, listener_config: { k8s_namespace: "agents" } },
  source_revision_config: { image_uri: "registry.example.com/agent:1" },
  secrets: [],
  ...extra,
});
