import { basename } from "node:path";
import type { SecretRedactor } from "../api/secret-redactor.js";
import { PlumbError } from "../errors.js";
import { loadVerdictsNearby } from "../git/status/status-nearby.js";
import { manifestDirOf } from "../git/status/status-source.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import {
  appliedView,
  openSession,
  planSession,
  type SessionFlags,
  type SessionIo,
} from "../reconcile/session.js";
import type { ChecksRecord } from "../status/checks/checks-record.js";
import { laterChecks } from "../status/checks/checks-record-problems.js";
import { appliedDigest } from "../status/checks/checks-record-applied.js";
import { statusFileName, statusKey } from "../status/status-types.js";
import type { SourceFacts } from "./gates.js";
import type { PromotionPair } from "./promotion-pairs.js";

// The source environment as a promotion reads it: its plan of the promoted deployments (git
// against live, three-way, nothing sent), each one's latest revision, the control plane's time
// (the Date of that revision's answer) and its status records (write-ahead intent, checks,
// upload digest). Only reads: no lock is taken and no record is written.

export type SourceRead = { facts: SourceFacts; sourceDigest: string | null };

/** `config` with every string's secrets of the run redacted (whole forms: src/api/secret-redactor.ts). */
const redactWhole = <T extends object>(config: T, redactor: SecretRedactor): T =>
  Object.fromEntries(
    Object.entries(config).map(([key, value]) => [
      key,
      typeof value === "string" ? redactor.redactWhole(value) : value,
    ]),
  ) as T;

/** `fetch` that remembers the Date header of the last answer (the control plane's clock). */
function dateKeepingFetch(inner: typeof fetch) {
  const seen = { at: null as number | null };
  const wrapped: typeof fetch = async (input, init) => {
    const response = await inner(input, init);
    const date = Date.parse(response.headers.get("date") ?? "");
    if (Number.isFinite(date)) seen.at = date;
    return response;
  };
  return { fetch: wrapped, seen };
}

export async function readSource(
  root: string,
  flags: SessionFlags,
  io: SessionIo,
  pairs: readonly PromotionPair[],
): Promise<Map<string, SourceRead>> {
  const dated = dateKeepingFetch(io.fetch ?? fetch);
  const sourceIo: SessionIo = { ...io, fetch: dated.fetch };
  const session = await openSession(root, flags, sourceIo);
  // The intents and checks of the stores nearby too: an apply of the tree (its intent in the tree's
  // store) may be sending this very deployment while PATH's own store says nothing, and a later
  // verify there may have overturned the checks PATH's store holds (docs/environments.md).
  // With --status-dir the intents only, of PATH's default store too: its checks are DIR's alone.
  const nearby = !flags.statusDir || flags.statusDirOfEnvironment === true;
  const top = gitRootOf(manifestDirOf(root));
  const verdicts = await loadVerdictsNearby(session.location, top, { below: true, ownDefault: !nearby });
  const checksNearby = nearby ? verdicts.checks : new Map<string, ChecksRecord>();
  const names = pairs.map((p) => p.source.manifest.metadata.name);
  const result = await planSession(session, sourceIo, names);
  if (!result.ok) {
    const first = result.problems.find((p) => p.severity === "error");
    throw new PlumbError(
      "invalid-manifests",
      `environment ${flags.environment ?? ""}: ${first ? `${first.file}:${first.line}: ${first.message}` : "cannot be planned"}; run plumb plan --env ${flags.environment ?? ""} and fix it`,
    );
  }
  const { controlPlane } = session.connect().ports;
  const reads = new Map<string, SourceRead>();
  for (const pair of pairs) {
    const name = pair.source.manifest.metadata.name;
    const deployment = result.live.deployments.find((d) => d.name === name);
    if (!deployment)
      throw new PlumbError(
        "promotion-blocked",
        `${pair.name}: deployment ${name} does not exist in ${flags.environment ?? "the source environment"}; apply it there first (plumb apply --env ${flags.environment ?? ""})`,
      );
    const read = deployment.latest_revision_id
      ? await controlPlane.getRevision(deployment.id, deployment.latest_revision_id)
      : null;
    // The version is copied into git: a secret of the run in it (the server's own API key as an
    // image tag) is redacted here, and pin.ts refuses the redacted value.
    const revision = read && {
      ...read,
      source_revision_config: redactWhole(read.source_revision_config, session.redactor),
    };
    const now = dated.seen.at;
    // As plan reads it: its own store, and what the stores above and below PATH last applied when
    // that was later; a pending intent from its own store or any nearby, the checks finished last.
    const key = statusKey("Deployment", name);
    const record = appliedView(session).objects.get(key);
    const elsewhere = verdicts.intents.get(key);
    reads.set(pair.name, {
      facts: {
        deployment,
        revision,
        change: result.plan.changes.find((c) => c.kind === "Deployment" && c.name === name) ?? null,
        pending: Boolean(record?.pending) || elsewhere !== undefined,
        pendingStore: record?.pending ? null : (elsewhere?.store ?? null),
        checks: laterChecks(record?.checks, checksNearby.get(key)) ?? null,
        // What the record says is applied now, as plan reads it: the checks must have verified it.
        applied: appliedDigest(record),
        recordProblem:
          session.store.problems.find((p) => basename(p.file) === statusFileName("Deployment", name))
            ?.message ?? null,
        now:
          now === null
            ? { ms: session.clock.now(), from: "local clock" }
            : { ms: now, from: "control plane" },
      },
      sourceDigest: record?.source_upload?.digest ?? null,
    });
  }
  return reads;
}
