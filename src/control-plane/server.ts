import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { systemClock } from "../clock.js";
import { PlumbError } from "../errors.js";
import { createAgentServerModule } from "./agent-server/index.js";
import { createAuthenticator } from "./access/auth.js";
import { installBodyPolicy } from "./http/json/body-policy.js";
import { installJsonParser } from "./http/json/json-body.js";
import { installQueryNulCheck } from "./http/json/nul-check.js";
import type { ControlPlaneContext } from "./context.js";
import { registerDeploymentRoutes } from "./deployments/routes.js";
import { DeploymentStore } from "./deployments/store.js";
import {
  bodyStillComing,
  capConnections,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
} from "./http/connections.js";
import { installErrorHandling } from "./http/http-errors.js";
import { trackRouteMethods } from "./http/method-not-allowed.js";
import { registerMiscRoutes } from "./http/misc-routes.js";
import {
  type ApiKeyGrant,
  type ControlPlaneOptions,
  DEFAULT_API_KEY,
  DEFAULT_INTEGRATIONS,
  DEFAULT_LISTENERS,
  DEFAULT_TENANT_ID,
} from "./options.js";
import { createOrganizationsModule } from "./organizations/index.js";
import { installRequestGuards } from "./http/request-guards.js";
import { installRequestLog } from "./http/request-log.js";
import { controlPlaneValidators } from "./http/shared-validators.js";
import { startStateKeeper } from "./state.js";

export type RunningControlPlane = {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The keys granted now. */
  readonly apiKeys: ApiKeyGrant[];
  /** Grants these keys instead, from the next request on (`plumb control-plane` on SIGHUP). */
  setApiKeys(grants: ApiKeyGrant[]): void;
  stop(): Promise<void>;
};

const normalised = (grants: ApiKeyGrant[]): ApiKeyGrant[] =>
  grants.map((g) => ({ key: g.key, tenants: g.tenants.map((t) => t.toLowerCase()) }));

function resolveOptions(options: Partial<ControlPlaneOptions> = {}): ControlPlaneOptions {
  return {
    host: "127.0.0.1",
    port: 0,
    dataDir: undefined,
    mode: "saas",
    region: "us",
    apiKeys: [{ key: DEFAULT_API_KEY, tenants: [DEFAULT_TENANT_ID] }],
    revisionSeconds: 1,
    runSeconds: 1,
    streamHeartbeatSeconds: 15,
    webhookAllowHosts: [],
    deploymentReadySeconds: 1,
    faults: undefined,
    faultSeed: 1,
    rateLimits: {},
    bodyLimit: 1024 * 1024,
    requestTimeoutMs: 300_000,
    maxConnections: DEFAULT_MAX_CONNECTIONS,
    maxConnectionsPerAddress: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    keepAliveTimeoutMs: DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    clock: systemClock,
    logger: false,
    listeners: DEFAULT_LISTENERS,
    integrations: DEFAULT_INTEGRATIONS,
    wrapJournalFile: undefined,
    selfHostedJitProvisioningEnabled: true,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  };
}

/** Starts a local control plane: a real HTTP server of the whole API (docs/control-plane.md). */
export async function startControlPlane(
  options: Partial<ControlPlaneOptions> = {},
): Promise<RunningControlPlane> {
  const o = resolveOptions(options);
  let apiKeys = normalised(o.apiKeys);
  const { app, auth } = createFastify(o, apiKeys);
  let commit: () => Promise<void> = async () => undefined;

  let url = "";
  const timing = { revisionMs: o.revisionSeconds * 1000, readyMs: o.deploymentReadySeconds * 1000 };
  const store = new DeploymentStore(timing);
  const ctx: ControlPlaneContext = {
    clock: o.clock,
    mode: o.mode,
    region: o.region,
    runSeconds: o.runSeconds,
    streamHeartbeatSeconds: o.streamHeartbeatSeconds,
    webhookAllowHosts: o.webhookAllowHosts,
    tenantOf: (request) => request.tenantId,
    deploymentExists: (tenantId, id) => {
      const record = store.get(tenantId, id, o.clock.now());
      return record !== undefined && record.deletedAt === undefined;
    },
    commit: () => commit(),
  };
  const common = {
    store,
    clock: o.clock,
    tenantOf: (r: FastifyRequest) => r.tenantId,
    commit: () => commit(),
  };
  const env = { mode: o.mode, listeners: o.listeners, integrations: o.integrations };
  registerDeploymentRoutes(app, { ...common, env, timing, baseUrl: () => url });
  registerMiscRoutes(app, { ...common, ...o, uploadLimit: 64 * 1024 * 1024 });
  const modules = [
    createAgentServerModule(ctx),
    createOrganizationsModule(ctx, {
      selfHostedJitProvisioningEnabled: o.selfHostedJitProvisioningEnabled,
    }),
  ];
  for (const module of modules) module.register(app);

  const kept = await startStateKeeper(
    o.dataDir,
    store,
    modules.map((m) => m.state),
    () => o.clock.now(),
    o.wrapJournalFile,
  );
  commit = () => kept.commit();
  try {
    await app.listen({ host: o.host, port: o.port });
  } catch (error) {
    await kept.close();
    throw listenError(error, o.host, o.port);
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : o.port;
  url = `http://${o.host.includes(":") ? `[${o.host}]` : o.host}:${port}`;
  if (o.logger) o.logger.info({ url }, "listening");
  let stopping: Promise<void> | undefined;
  return {
    url,
    get apiKeys() {
      return apiKeys;
    },
    setApiKeys(grants) {
      apiKeys = normalised(grants);
      auth.replace(apiKeys);
    },
    stop: () => (stopping ??= stopServer(app, kept)),
  };
}

/** The HTTP server with its parsers, guards, request log, Date header and error handling. */
function createFastify(
  o: ControlPlaneOptions,
  apiKeys: ApiKeyGrant[],
): { app: FastifyInstance; auth: ReturnType<typeof createAuthenticator> } {
  const app = Fastify({
    logger: false, // request-log.ts logs each request itself, at a fraction of the cost
    bodyLimit: o.bodyLimit,
    // Node's own limit, which fastify turns off (0): a body that stalls half-way held its connection
    // and what it had sent for ever. Node checks it every 30 s (a test's short timeout: its half),
    // and only when the headers' own limit (60 s) is not longer.
    requestTimeout: o.requestTimeoutMs,
    // fastify's own default, 72 s, is for a server behind a load balancer; Node's 5 s frees an idle
    // client's socket sooner (undici, plumb's client, reads the Keep-Alive header and closes first).
    keepAliveTimeout: o.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, o.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, o.requestTimeoutMs / 2)),
    },
  }) as unknown as FastifyInstance;
  // The body schemas compiled once per process, not per server: every error of a body, never coerced.
  app.setValidatorCompiler(controlPlaneValidators.compiler);
  const limits = { max: o.maxConnections, perAddress: o.maxConnectionsPerAddress };
  capConnections(app.server, limits, o.logger, () => o.clock.now());
  installJsonParser(app);
  installBodyPolicy(app);
  installQueryNulCheck(app);
  const auth = createAuthenticator(apiKeys);
  const routes = trackRouteMethods(app); // before any route: what each serves, for 405, 307 and guards
  const routeConfigAt = routes.configAt;
  installRequestGuards(app, { ...o, authenticate: auth.authenticate, knowsKey: auth.knows, routeConfigAt });
  installRequestLog(app, o.logger);
  // Every answer's Date is this server's clock, the one its timestamps come from (as on a real
  // server): plumb promote's soak gate measures from a revision's updated_at to it.
  app.addHook("onSend", async (request, reply) => {
    reply.header("date", new Date(o.clock.now()).toUTCString());
    if (bodyStillComing(request.raw)) reply.header("connection", "close");
  });
  installErrorHandling(app, routes, o.bodyLimit, o.logger); // after the guards: the 404 handler keeps the hooks it sees
  return { app, auth };
}

/** Lets requests in flight finish (up to STOP_GRACE_MS), then closes the state keeper. */
async function stopServer(app: FastifyInstance, kept: { close(): Promise<void> }): Promise<void> {
  // Requests in flight may finish; a client that sent half a request and went quiet (an
  // aborted upload, a stalled proxy) would hold the close forever: cut it after the grace.
  const cut = setTimeout(() => app.server.closeAllConnections(), STOP_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
  await kept.close();
}

/** How long stop() lets requests in flight finish before it closes their connections. */
const STOP_GRACE_MS = 2_000;

const LISTEN_ADVICE: Record<string, string> = {
  EADDRINUSE:
    "the port is already in use: stop what holds it, or pick another with --port (0 picks a free one)",
  EACCES: "permission denied: ports below 1024 need privileges; pick a higher port with --port",
  EADDRNOTAVAIL: "the address is not one of this machine's: bind 127.0.0.1 or 0.0.0.0 with --host",
};

/** A failed bind is the user's to fix (busy port, privileged port, foreign address): say how. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const advice = code === undefined ? undefined : LISTEN_ADVICE[code];
  if (advice === undefined) return error;
  const where = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return new PlumbError("listen-failed", `cannot listen on ${where} (${code}): ${advice}`, {
    exitCode: 1,
    cause: error,
  });
}
