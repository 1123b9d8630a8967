import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import type { Clock } from "../../../src/clock.js";
import type { ControlPlaneContext, StatefulModule } from "../../../src/control-plane/context.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../../src/control-plane/options.js";

/** A clock whose sleeps resolve only when the test advances it. */
export type ManualClock = Clock & { advance(ms: number): Promise<void>; pending(): number };

export function manualClock(start = Date.parse("2026-01-01T00:00:00.000Z")): ManualClock {
  let now = start;
  let timers: Array<{ at: number; resolve: () => void }> = [];
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason as Error);
        const timer = { at: now + ms, resolve };
        timers.push(timer);
        signal?.addEventListener("abort", () => {
          timers = timers.filter((other) => other !== timer);
          reject(signal.reason as Error);
        });
      }),
    async advance(ms) {
      now += ms;
      const due = timers.filter((timer) => timer.at <= now);
      timers = timers.filter((timer) => timer.at > now);
      for (const timer of due) timer.resolve();
      await flush();
    },
    pending: () => timers.length,
  };
}

export type TestContextOptions = {
  clock?: Clock;
  runSeconds?: number;
  streamHeartbeatSeconds?: number;
  mode?: ControlPlaneContext["mode"];
  /** "tenant/deploymentId" pairs that exist. */
  deployments?: string[];
};

export type TestContext = ControlPlaneContext & {
  /** The persisted snapshot of each commit, newest last (what --data would hold). */
  commits: Array<Record<string, unknown>>;
  modules: StatefulModule[];
};

/** The seam the real server fills: tenant from the `x-api-key` header (`key-<tenant>`), a set of deployments. */
export function testContext(options: TestContextOptions = {}): TestContext {
  const deployments = new Set(options.deployments ?? ["acme/dep-1"]);
  const context: TestContext = {
    clock: options.clock ?? manualClock(),
    mode: options.mode ?? "saas",
    region: "us",
    runSeconds: options.runSeconds ?? 1,
    streamHeartbeatSeconds: options.streamHeartbeatSeconds ?? 15,
    webhookAllowHosts: [],
    tenantOf: (request: FastifyRequest) => String(request.headers["x-api-key"]).replace(/^key-/, ""),
    deploymentExists: (tenant, id) => deployments.has(`${tenant}/${id}`),
    commits: [],
    modules: [],
    commit: async () => {
      context.commits.push(
        Object.fromEntries(context.modules.map((m) => [m.name, structuredClone(m.snapshot())])),
      );
    },
  };
  return context;
}

/** A fastify app with an auth hook like the server's (401 without a key) and the given modules. */
export async function buildApp(
  context: TestContext,
  modules: Array<{ register(app: FastifyInstance): void; state: StatefulModule }>,
): Promise<FastifyInstance> {
  const app = Fastify();
  app.addHook("onRequest", async (request, reply) => {
    if (request.headers["x-api-key"] === undefined) return reply.code(401).send({ detail: "Invalid token" });
  });
  for (const module of modules) {
    context.modules.push(module.state);
    module.register(app);
  }
  await app.ready();
  return app;
}

/** Real time for `now`, but a sleep of more than 0 ms lasts until the test calls `release()`. */
export type GatedClock = Clock & { release(): void; waiting(): number };

export function gatedClock(): GatedClock {
  let gates: Array<() => void> = [];
  return {
    now: () => Date.now(),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason as Error);
        if (ms <= 0) return resolve();
        gates.push(resolve);
        signal?.addEventListener("abort", () => {
          gates = gates.filter((gate) => gate !== resolve);
          reject(signal.reason as Error);
        });
      }),
    release() {
      const open = gates;
      gates = [];
      for (const resolve of open) resolve();
    },
    waiting: () => gates.length,
  };
}

/** Creates a gitrepo deployment on a running local control plane; its agent server is at `/agents/{id}`. */
export async function createAgentDeployment(
  url: string,
  name: string,
  apiKey: string = DEFAULT_API_KEY,
): Promise<string> {
  const response = await fetch(`${url}/v2/deployments`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify({
      name,
      source: "gitrepo",
      source_config: {
        integration_id: DEFAULT_INTEGRATION_ID,
        repo_url: "https://git.example.com/acme/agent",
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    }),
  });
  if (response.status !== 201)
    throw new Error(`creating deployment ${name}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}
