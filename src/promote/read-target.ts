import { openSession, type SessionFlags, type SessionIo } from "../reconcile/session.js";
import type { Deployment } from "../schema/deployment.js";
import type { Revision } from "../schema/revision.js";
import { statusKey } from "../status/status-types.js";

// The target environment as a promotion reads it, for the deployments git already has at the
// source's version: is that version running there? Its live deployment (by the name it resolves
// to there), the active revision's and the latest one's, and its status record's upload digest
// (internal_source). Only reads; a target that cannot be read is an answer too (unknown).

export type TargetLive =
  | {
      deployment: Deployment | null;
      /** The revision serving (active_revision_id); null when none. */
      active: Revision | null;
      /** The latest revision, when it is not the active one (a rollout under way or failed). */
      latest: Revision | null;
      /** The upload digest its status record holds (internal_source); null when none. */
      digest: string | null;
    }
  | { error: string };

/** `names`: each deployment's name in the target (after its name_suffix), by the name written. */
export async function readTarget(
  root: string,
  /** The target's session settings, read only now (its API key may be unset where promote runs). */
  settings: () => { flags: SessionFlags; io: SessionIo },
  names: ReadonlyMap<string, string>,
  /** The error as said to the user (its hint naming the target Environment's settings). */
  explain: (error: unknown) => unknown = (error) => error,
): Promise<Map<string, TargetLive>> {
  const read = new Map<string, TargetLive>();
  try {
    const { flags, io } = settings();
    const session = await openSession(root, flags, io);
    const { controlPlane } = session.connect().ports;
    for (const [written, name] of names) {
      const deployment = await controlPlane.findDeploymentByName(name);
      const revision = (id: string | null | undefined) =>
        deployment && id ? controlPlane.getRevision(deployment.id, id) : Promise.resolve(null);
      const active = await revision(deployment?.active_revision_id);
      const latest =
        deployment?.latest_revision_id !== deployment?.active_revision_id
          ? await revision(deployment?.latest_revision_id)
          : null;
      const record = session.store.objects.get(statusKey("Deployment", name));
      read.set(written, { deployment, active, latest, digest: record?.source_upload?.digest ?? null });
    }
  } catch (thrown) {
    const error = explain(thrown);
    for (const written of names.keys())
      if (!read.has(written))
        read.set(written, { error: error instanceof Error ? error.message : String(error) });
  }
  return read;
}
