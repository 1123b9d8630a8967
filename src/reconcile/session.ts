import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { insideRepository } from "../git/inside-repository.js";
import { simpleGit } from "../git/simple-git.js";
import { readApiOptions } from "../api/config.js";
import { createSecretRedactor, tokensOf } from "../api/secret-redactor.js";
import { systemClock } from "../clock.js";
import type { Deployment } from "../schema/deployment.js";
import { createApplyPorts } from "../apply/api/api-adapter.js";
import { type StatusLocation, manifestDirOf, resolveStatusDir } from "../git/status/status-source.js";
import { loadStatusWithNearby } from "../git/status/status-nearby.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import type { Session, SessionFlags, SessionIo } from "./session/session-types.js";

export type { Session, SessionFlags, SessionIo } from "./session/session-types.js";
export { appliedView, applyObjects, planSession, warnUnknownSecrets } from "./session/plan-session.js";

// The I/O edge shared by apply, drift and status: API settings, clients, the status store, the plan.

const LOOPBACK = /^(localhost|127(?:\.\d+){3}|\[::1\])$/i;

/**
 * The agent-server URL of a deployment without custom_url: only the local control plane serves
 * agent servers at `{apiUrl}/agents/{id}`, so the fallback applies only when the API URL is on a
 * loopback host (the local control plane's default); a real service's custom_url is never guessed.
 */
export function agentUrlFallback(apiUrl: string): ((deployment: Deployment) => string | null) | undefined {
  const url = new URL(apiUrl);
  if (!LOOPBACK.test(url.hostname)) return undefined;
  return (deployment) => `${apiUrl.replace(/\/+$/, "")}/agents/${deployment.id}`;
}

/** HEAD of the repository holding `root`; null outside git. */
export async function gitCommitOf(root: string): Promise<string | null> {
  try {
    const dir = (await stat(root)).isDirectory() ? root : dirname(root);
    if (!insideRepository(dir)) return null; // no git process (nor simple-git loaded) to learn that
    return (await simpleGit(dir).revparse(["HEAD"])).trim() || null;
  } catch {
    return null;
  }
}

export async function openSession(root: string, flags: SessionFlags, io: SessionIo): Promise<Session> {
  const clock = io.clock ?? systemClock;
  const location: StatusLocation = {
    root,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    ...(flags.gitEnv ? { gitEnv: flags.gitEnv } : {}),
    ...(flags.gitStop ? { gitStop: flags.gitStop } : {}),
    ...(flags.gitQueue ? { gitQueue: flags.gitQueue } : {}),
    environment: flags.environment, // ENV/ on the status branch, with its own lease
  };
  // The stores above PATH, up to the git root, and below a directory PATH; an explicit
  // --status-dir means that store only.
  const nearby = !flags.statusDir || flags.statusDirOfEnvironment === true;
  const { store, appliedNearby } = await loadStatusWithNearby(
    location,
    nearby ? gitRootOf(manifestDirOf(root)) : undefined,
    { below: nearby },
  );
  for (const problem of store.problems) {
    io.stderr.write(`plumb: ignoring status file ${problem.file}: ${problem.message}\n`);
  }
  const redactor = createSecretRedactor(tokensOf(io.env));
  let connected: ReturnType<Session["connect"]> | undefined;
  const connect = () => {
    if (connected) return connected;
    const api = readApiOptions(io.env, flags);
    const fence = io.beforeWrite ? { beforeWrite: io.beforeWrite } : {};
    const transport = { ...(io.fetch ? { fetch: io.fetch } : {}), redactor, ...fence };
    const ports = createApplyPorts({ api, clock, transport });
    connected = { api, ports, platform: ports.platformClient };
    return connected;
  };
  return {
    root,
    ...(flags.environment !== undefined ? { environment: flags.environment } : {}),
    clock,
    location,
    get statusDir() {
      return resolveStatusDir(location);
    },
    store,
    appliedNearby,
    redactor,
    connect,
  };
}
