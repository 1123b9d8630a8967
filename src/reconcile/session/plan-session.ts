import { planManifests, type PlanManifestsResult, recordsFromStatus } from "../plan/plan-run.js";
import { noManifests } from "../../manifest/load.js";
import type { ApplyObject } from "../../apply/apply-types.js";
import { withAppliedNearby } from "../../status/applied-nearby.js";
import { resolveStorePending } from "../../status/pending-intent.js";
import { findMissingEnv, formatMissingEnv } from "../missing-env.js";
import { findUnknownSecrets, formatUnknownSecretsWarning } from "../unknown-secrets.js";
import { buildApplyObject } from "../plan/plan-object.js";
import { withPrune } from "../../diff/plan/plan-prune.js";
import { sortProblems } from "../../manifest/validate.js";
import { decidePrune, findEmptiedManifests } from "../prune/prune-plan.js";
import { withoutMovedObjects } from "../prune/prune-moved.js";
import { treesRecordingElsewhere } from "../prune/prune-elsewhere.js";
import { type StatusStore, statusKey } from "../../status/status-types.js";
import type { Session, SessionIo } from "./session-types.js";

// A session's plan and what follows from it: the store it reads, the prune list, the apply objects
// and the warnings about secrets.

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
