import { useColor } from "./color.js";
import { Command } from "commander";
import { addConnectionOptions, type ConnectionFlags, outputOption } from "./options.js";
import type { PlanManifestsResult } from "../reconcile/plan-run.js";
import type { RevisionStatus } from "../schema/deployment.js";
import { formatStatusJson, formatStatusText } from "../reconcile/format-status.js";
import { openSession, planSession, type Session, type SessionIo } from "../reconcile/session.js";
import { refreshStatuses } from "../reconcile/status-refresh.js";
import { removeObjectStatus, saveObjectStatus } from "../reconcile/status-store.js";
import type { ObjectStatus, StatusStore } from "../reconcile/status-types.js";
import { PlumbError } from "../errors.js";
import { formatProblems } from "../manifest/format.js";

type Flags = ConnectionFlags & {
  output: "text" | "json";
};

/**
 * Refreshes the store against live and writes it: ids and revisions from the listing, the latest
 * revision read only where it is not the active one (the rest need no request), sync from the plan.
 */
export async function writeRefreshedStatus(
  session: Session,
  result: Extract<PlanManifestsResult, { ok: true }> & { store?: StatusStore },
): Promise<ObjectStatus[]> {
  const store = result.store ?? session.store;
  const { ports } = session.connect();
  const latestStatuses = new Map<string, RevisionStatus>();
  const unfinished = result.live.deployments.filter(
    (d) =>
      d.latest_revision_id &&
      d.latest_revision_id !== d.active_revision_id &&
      store.objects.has(`Deployment/${d.name}`),
  );
  await Promise.all(
    unfinished.map(async (d) => {
      const revision = await ports.controlPlane.getRevision(d.id, d.latest_revision_id ?? "");
      if (revision) latestStatuses.set(d.id, revision.status);
    }),
  );
  const refreshed = refreshStatuses({
    plan: result.plan,
    store,
    live: result.live.deployments,
    latestStatuses,
    now: session.clock.now(),
  });
  for (const record of refreshed.records) await saveObjectStatus(session.statusDir, record);
  for (const gone of refreshed.removed) await removeObjectStatus(session.statusDir, gone.kind, gone.name);
  return refreshed.records;
}

const defaultIo = (): SessionIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** `plumb status [PATH]`: the status store, refreshed against live. */
export function statusCommand(io: SessionIo = defaultIo()): Command {
  const command = new Command("status")
    .description("Show each object's sync and health, refreshed against the control plane")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(outputOption(["text", "json"]));
  return addConnectionOptions(command, "also read the status committed to this branch").action(
    async (path: string, flags: Flags) => {
      const session = await openSession(path, flags, io);
      const result = await planSession(session, io, []);
      if (!result.ok) {
        io.stderr.write(`${formatProblems(result.problems)}\n`);
        throw new PlumbError(
          "invalid-manifests",
          "the manifests are invalid: fix them (plumb validate) to refresh status",
        );
      }
      const records = await writeRefreshedStatus(session, result);
      const color = useColor(io);
      io.stdout.write(
        flags.output === "json" ? formatStatusJson(records) : formatStatusText(records, { color }),
      );
      process.exitCode = 0;
    },
  );
}
