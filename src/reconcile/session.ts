import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { insideRepository } from "../git/inside-repository.js";
import { simpleGit } from "../git/simple-git.js";
import { type ApiFlags, type ApiOptions, readApiOptions } from "../api/config.js";
import { createSecretRedactor, type SecretRedactor, tokensOf } from "../api/secret-redactor.js";
import type { PlatformClient } from "../api/platform-client.js";
import { planManifests, type PlanManifestsResult, recordsFromStatus } from "./plan/plan-run.js";
import { type ManifestLoads, noManifests } from "../manifest/load.js";
import { type Clock, systemClock } from "../clock.js";
import type { Deployment } from "../schema/deployment.js";
import { type ClientPorts, createApplyPorts } from "../apply/api/api-adapter.js";
import type { ApplyObject } from "../apply/apply-types.js";
import { type StatusLocation, manifestDirOf, resolveStatusDir } from "../git/status/status-source.js";
import { loadStatusWithNearby } from "../git/status/status-nearby.js";
import { withAppliedNearby } from "../status/applied-nearby.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import type { CheckoutQueue } from "../git/checkout-queue.js";
import type { GitStop } from "../git/stoppable-git.js";
import { resolveStorePending } from "../status/pending-intent.js";
import { findMissingEnv, formatMissingEnv } from "./missing-env.js";
import { findUnknownSecrets, formatUnknownSecretsWarning } from "./unknown-secrets.js";
import { buildApplyObject } from "./plan/plan-object.js";
import { withPrune } from "../diff/plan/plan-prune.js";
import { sortProblems } from "../manifest/validate.js";
import { decidePrune, findEmptiedManifests } from "./prune/prune-plan.js";
import { withoutMovedObjects } from "./prune/prune-moved.js";
import { treesRecordingElsewhere } from "./prune/prune-elsewhere.js";
import { type ObjectStatus, type StatusStore, statusKey } from "../status/status-types.js";

// The I/O edge shared by apply, drift and status: API settings, clients, the status store, the plan.

export type SessionIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  stdin?: { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  clock?: Clock;
  /** The state lock's fence for a writer (apply): checked before each mutating request leaves. */
  beforeWrite?: () => void;
  /** One command's manifest loads, shared by its environments' plans (loadManifestsOnce). */
  manifestLoads?: ManifestLoads;
};

export type SessionFlags = ApiFlags & {
  target?: string[];
  statusDir?: string;
  statusBranch?: string;
  /** Credentials for the status branch's fetches (the controller's git source), when it needs any. */
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the status branch's fetches end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** The checkout's git queue (the controller's), where the status branch's fetch takes its turn. */
  gitQueue?: CheckoutQueue | undefined;
  /** The environment planned (docs/environments.md): its deployments resolved; none without Environments. */
  environment?: string;
  /**
   * statusDir is the default store's ENV/ (forEachEnvironment), not a --status-dir: the stores above
   * and below are read as without one (docs/status.md "Stores above and below").
   */
  statusDirOfEnvironment?: boolean;
};

export type Session = {
  root: string;
  /** The environment this session plans (docs/environments.md), when the repository defines any. */
  environment?: string;
  clock: Clock;
  location: StatusLocation;
  /** The status directory of `location` (derived, so the two cannot disagree). */
  readonly statusDir: string;
  store: StatusStore;
  /**
   * What the stores above and below PATH last applied, per object (docs/status.md "Stores above and
   * below"), read only: seen through appliedView, never written, never given to prune. Empty with
   * --status-dir.
   */
  appliedNearby: ReadonlyMap<string, ObjectStatus>;
  /** This run's secrets (tokens, the API key, each secret value as it is resolved), removed from server text. */
  redactor: SecretRedactor;
  /** Built on first use, so invalid manifests stop before API settings are needed. */
  connect(): {
    api: ApiOptions;
    ports: ClientPorts;
    /** Organization settings (the one behind ports.platform); shares the control plane's rate budget. */
    platform: PlatformClient;
  };
};

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

/**
 * The store as plan and apply read what was last applied (secret fingerprints, source upload,
 * applied spec): the session's own, with the later applies the stores above and below recorded
 * (applied-nearby.ts). Prune, emptied-manifest checks and status writes read session.store alone.
 */
export const appliedView = (session: Session): StatusStore =>
  withAppliedNearby(session.store, session.appliedNearby);

/** Where the session's records were read, for prune's scope (prune-scope.ts). */
const storeOf = (session: Session) => ({ statusDir: session.statusDir, environment: session.environment });

/** Loads, validates and plans against live (see planManifests), with this session's clients and store. */
export async function planSession(
  session: Session,
  io: SessionIo,
  targets: readonly string[],
  signal?: AbortSignal,
  options: { requireManifests?: boolean; prune?: boolean; replace?: readonly string[] } = {},
): Promise<PlanManifestsResult> {
  const result = await planManifests({
    root: session.root,
    targets,
    env: io.env,
    redactor: session.redactor,
    // Called once the manifests are valid: missing API settings fail there, before any read starts.
    connect: () => {
      const { api, ports, platform } = session.connect();
      const server = { client: ports.controlPlane, setting: api.mode, apiUrl: api.apiUrl };
      return { controlPlane: ports.controlPlane, platform, server };
    },
    recorded: recordsFromStatus(appliedView(session)),
    loads: io.manifestLoads,
    parallelParse: true, // a command's process does nothing else while it parses
    environmentsAbove: true, // as loadManifestsOnce has it for the command's other loads
    environmentRequested: session.environment !== undefined, // (loadManifestsOnce reuses a load without)
    ...(session.environment !== undefined ? { environment: session.environment } : {}),
    ...(options.replace ? { replace: options.replace } : {}),
    ...(signal ? { signal } : {}),
  });
  if (!result.ok) return result;
  // A file that held managed objects and now defines none is an error (manifest-emptied), not a
  // removal. With --target only the targets are kept, so the others' files are not judged.
  // A file whose Deployments no longer run in this environment still defines them: for this
  // environment what it recorded is removed from git, not emptied (docs/environments.md).
  const tree = {
    objects: result.desired.map((d) => d.loaded),
    problems: result.problems,
    elsewhere: result.elsewhere,
  };
  const emptied =
    targets.length === 0
      ? findEmptiedManifests(session.root, session.store.objects.values(), tree, storeOf(session))
      : [];
  if (emptied.length > 0) return { ok: false, problems: sortProblems([...result.problems, ...emptied]) };
  // A PATH with nothing to plan is a mistake (a wrong directory), not "no changes".
  if (result.desired.length === 0 && result.elsewhere.length === 0 && options.requireManifests)
    throw noManifests(session.root);
  // Intents a crash left behind are settled against what was just read, for everything after the plan.
  const planned = new Set(result.plan.changes.map((c) => statusKey(c.kind, c.name)));
  session.store = resolveStorePending(session.store, result.live.deployments, planned);
  // Managed objects whose manifests are gone: listed always, deleted only by apply --prune.
  // With --target only the targets were planned (and listed), so nothing else is judged removed;
  // with a single file PATH, only the objects recorded in that file (prune-plan.ts).
  if (targets.length === 0) {
    const decision = decidePrune({
      root: session.root,
      records: session.store.objects.values(),
      tree,
      live: result.live.deployments,
      prune: options.prune === true,
      store: storeOf(session),
    });
    if (decision.ok) {
      // What moved elsewhere in the store's tree is still in git (prune-moved.ts).
      const prune = await withoutMovedObjects({
        root: session.root,
        prune: decision.prune,
        records: session.store.objects.values(),
        store: storeOf(session),
        // Or to a directory with a store of its own that applied it since (prune-elsewhere.ts).
        elsewhere: await treesRecordingElsewhere({
          root: session.root,
          prune: decision.prune,
          store: storeOf(session),
        }),
        env: io.env,
        environment: session.environment,
        loads: io.manifestLoads,
      });
      result.plan = withPrune(result.plan, prune);
    } else if (decision.kept) result.plan = withPrune(result.plan, decision.kept);
  }
  return result;
}

/** The engine's input: each planned change with its manifest's verify spec, digest and source to pack. */
export function applyObjects(result: Extract<PlanManifestsResult, { ok: true }>): ApplyObject[] {
  return result.plan.changes.map((change, i) => buildApplyObject(change, result.desired[i], result.root));
}

/** Says once on stderr when secrets will be re-sent because no fingerprints are recorded (unknown-secrets.ts). */
export function warnUnknownSecrets(
  session: Session,
  result: Extract<PlanManifestsResult, { ok: true }>,
  io: Pick<SessionIo, "stderr" | "env">,
): void {
  const view = appliedView(session);
  const names = findUnknownSecrets(result.desired, result.live.deployments, (key) => view.objects.get(key));
  const warning = formatUnknownSecretsWarning(names, session.root);
  if (warning) io.stderr.write(`plumb: ${warning}\n`);
  for (const line of formatMissingEnv(findMissingEnv(result.desired, io.env)))
    io.stderr.write(`plumb: ${line}\n`);
}
