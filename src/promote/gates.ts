import type { FieldChange, PlannedChange } from "../diff/plan/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import type { EnvironmentManifest } from "../schema/environment.js";
import type { Revision } from "../schema/revision.js";
import type { ChecksRecord } from "../status/checks/checks-record.js";
import { checksRecordProblems } from "../status/checks/checks-record-problems.js";

// The gates of a promotion (docs/environments.md, "Promotion"), judged on what the source
// environment's control plane and status records say about its latest revision. Pure.
//
// - deployed (on unless `deployed: false`): the latest revision is DEPLOYED and active, and the
//   source environment's plan is a no-op: no drift, no change in git waiting to be applied, no
//   write-ahead intent left by an apply in flight;
// - soak: that revision has been DEPLOYED at least this long, both times from the control plane
//   (the revision's updated_at, and the Date of its answer);
// - checks: the agent's checks ran on that very revision and met min_pass_ratio (default 1) and
//   max_latency_p95_ms. A record whose values are impossible or contradict each other (a
//   pass_ratio that is not passed / runs, passed above runs) fails the gate, saying what is wrong.

export type Gates = NonNullable<NonNullable<EnvironmentManifest["spec"]["promotion"]>["gates"]>;
type GateName = "deployed" | "soak" | "checks";
export type GateResult = { gate: GateName; ok: boolean; detail: string };

export type SourceFacts = {
  deployment: Deployment;
  /** The deployment's latest revision; null when it has none or it could not be read. */
  revision: Revision | null;
  /** The source environment's plan of this deployment (git against live, three-way). */
  change: Pick<PlannedChange, "action" | "fields" | "revision_fields" | "in_place_fields"> | null;
  /** The status record still holds a write-ahead intent (an apply in flight or interrupted). */
  pending: boolean;
  /** The store nearby holding that intent (an apply of the tree above, or of a directory below), when not PATH's own. */
  pendingStore?: string | null;
  /** The status record's checks (apply's verify: src/status/checks-record.ts); null when none. */
  checks: ChecksRecord | null;
  /**
   * The digest of what the status record says is applied now (checks-record-applied.ts): the checks
   * hold only when they verified that. Undefined: not compared (a caller without a record).
   */
  applied?: string | undefined;
  /** Why the deployment's status record was ignored when it was (not JSON, not a record), else null. */
  recordProblem?: string | null;
  /** The control plane's time (its Date header), or the local clock when it sent none. */
  now: { ms: number; from: "control plane" | "local clock" };
};

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "30m" as milliseconds (the schema allows digits and ms, s, m or h). */
export function soakMs(text: string): number {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text);
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** "1h 5m", "45s": a duration for people. */
export function formatDuration(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const parts = [h ? `${h}h` : "", m ? `${m}m` : "", sec || (!h && !m) ? `${sec}s` : ""];
  return parts.filter(Boolean).join(" ");
}

const describeFields = (fields: readonly FieldChange[], origins: readonly string[]) =>
  fields.filter((f) => origins.includes(f.origin ?? "none")).map((f) => f.field);

function deployedGate(facts: SourceFacts): GateResult {
  const fail = (detail: string): GateResult => ({ gate: "deployed", ok: false, detail });
  const { deployment, revision, change } = facts;
  if (!revision) return fail(`deployment ${deployment.name} has no revision to promote`);
  if (revision.status !== "DEPLOYED")
    return fail(`revision ${revision.id} is ${revision.status}, not DEPLOYED`);
  if (deployment.active_revision_id !== revision.id)
    return fail(
      `revision ${revision.id} is not the active one (active: ${deployment.active_revision_id ?? "none"})`,
    );
  if (facts.pending)
    return fail(
      `an apply is in flight or was interrupted (its write-ahead intent is recorded${facts.pendingStore ? ` in ${facts.pendingStore}` : ""}): wait for it to end, or apply the source environment again if it was interrupted`,
    );
  if (facts.recordProblem)
    return fail(
      `its status record was ignored (${facts.recordProblem}): whether an apply is in flight is unknown; correct the record or apply the source environment again`,
    );
  if (!change) return fail("not planned in the source environment");
  if (change.action !== "noop") {
    const fields = change.fields ?? [];
    const drift = describeFields(fields, ["drift", "conflict"]);
    const pending = describeFields(fields, ["change", "conflict"]);
    const reasons = [
      drift.length ? `drift in ${drift.join(", ")}` : "",
      pending.length ? `a change in git not applied yet: ${pending.join(", ")}` : "",
    ].filter(Boolean);
    const all = [...change.revision_fields, ...change.in_place_fields];
    return fail(
      reasons.length > 0
        ? reasons.join("; ")
        : `live differs from git (${change.action}${all.length ? `: ${all.join(", ")}` : ""})`,
    );
  }
  return {
    gate: "deployed",
    ok: true,
    detail: `revision ${revision.id} is DEPLOYED, active and in sync with git`,
  };
}

/** How far a Date header may read behind the moment it answers for: it counts whole seconds. */
const DATE_RESOLUTION_MS = 1000;

function soakGate(facts: SourceFacts, soak: string): GateResult {
  const revision = facts.revision;
  const fail = (detail: string): GateResult => ({ gate: "soak", ok: false, detail });
  if (!revision || revision.status !== "DEPLOYED")
    return fail(`no DEPLOYED revision to soak (${soak} needed)`);
  const since = Date.parse(revision.updated_at);
  if (!Number.isFinite(since))
    return fail(`its updated_at ${JSON.stringify(revision.updated_at)} is not a time; ${soak} needed`);
  const measured = facts.now.ms - since;
  // The revision was DEPLOYED before the answer that says so: a Date header, whole seconds, reads up
  // to 999 ms before an updated_at of the same second. Further ahead, the two clocks disagree.
  if (-measured >= DATE_RESOLUTION_MS)
    return fail(
      `its updated_at ${revision.updated_at} is ${formatDuration(-measured)} ahead of the ${facts.now.from}'s time (${new Date(facts.now.ms).toISOString()}): the clocks disagree, so how long it has soaked is unknown; ${soak} needed`,
    );
  const soaked = Math.max(0, measured);
  const ok = soaked >= soakMs(soak);
  const detail = `deployed ${formatDuration(soaked)} ago (at ${revision.updated_at}, ${facts.now.from}); ${soak} needed`;
  return { gate: "soak", ok, detail };
}

function checksGate(facts: SourceFacts, gates: NonNullable<Gates["checks"]>): GateResult {
  const id = facts.revision?.id ?? facts.deployment.latest_revision_id ?? "none";
  const checks = facts.checks;
  if (!checks && facts.recordProblem)
    return {
      gate: "checks",
      ok: false,
      detail: `no checks read for revision ${id}: its status record was ignored (${facts.recordProblem}); run the checks again (apply the source environment) or correct the record`,
    };
  if (!checks || checks.revision_id !== id)
    return {
      gate: "checks",
      ok: false,
      detail: `no checks recorded for revision ${id}${checks ? ` (the last ran on ${checks.revision_id})` : ""}`,
    };
  const problems = checksRecordProblems(checks);
  if (problems.length > 0)
    return {
      gate: "checks",
      ok: false,
      detail: `the checks record of revision ${id} is not consistent, so none of it is trusted: ${problems.join("; ")}; run the checks again (apply the source environment) or correct its status record`,
    };
  const ahead = checksAhead(checks, facts.now);
  if (ahead) return { gate: "checks", ok: false, detail: ahead };
  const unverified = checksUnverified(checks, facts.applied);
  if (unverified) return { gate: "checks", ok: false, detail: unverified };
  const minRatio = gates.min_pass_ratio ?? 1;
  const maxP95 = gates.max_latency_p95_ms;
  const failures = [
    checks.runs === 0 ? "no run" : "",
    checks.pass_ratio < minRatio ? `pass ratio ${checks.pass_ratio} < ${minRatio}` : "",
    maxP95 !== undefined && checks.latency_ms.p95 > maxP95
      ? `p95 ${checks.latency_ms.p95} ms > ${maxP95} ms`
      : "",
  ].filter(Boolean);
  const measured = `${checks.passed}/${checks.runs} passed (ratio ${checks.pass_ratio}), p95 ${checks.latency_ms.p95} ms, at ${checks.at}`;
  return {
    gate: "checks",
    ok: failures.length === 0,
    detail: failures.length ? `${failures.join("; ")}: ${measured}` : measured,
  };
}

/**
 * How far a checks record's `at` (the clock of the machine whose apply ran them) may read ahead of
 * the control plane's time: two machines' clocks, not one as for the soak; NTP keeps them well within.
 */
const CHECKS_CLOCK_TOLERANCE_MS = 60_000;

/**
 * A checks record that finished after now: the clock that wrote it is ahead. Of the records of PATH's
 * store and those nearby the one with the latest `at` stands (laterChecks), so a pass written by a
 * machine a day ahead outranked, for that day, a failure of the same revision recorded later from a
 * right clock, and promote moved the revision on it. Null when it is not ahead (or `at` is no time:
 * such a record counts as earliest, outranking none).
 */
function checksAhead(checks: ChecksRecord, now: SourceFacts["now"]): string | null {
  const at = Date.parse(checks.at);
  if (!Number.isFinite(at) || at - now.ms <= CHECKS_CLOCK_TOLERANCE_MS) return null;
  return `the checks of revision ${checks.revision_id} finished at ${checks.at}, ${formatDuration(at - now.ms)} ahead of the ${now.from}'s time (${new Date(now.ms).toISOString()}): the clock that recorded them is wrong, so whether they are the latest verdict on it is unknown; set that machine's clock right and run the checks again (apply the source environment)`;
}

/**
 * Checks that did not verify what is applied now: a change applied in place since (same revision:
 * an external_container's custom_url, a secret) without a wait and verify, or a record of an older
 * plumb that does not say what it verified. Null when they did (or nothing is compared).
 */
function checksUnverified(checks: ChecksRecord, applied: string | undefined): string | null {
  if (applied === undefined) return null;
  const again = "run the checks again: plumb apply the source environment, waiting (without --no-wait)";
  if (checks.applied_digest === undefined)
    return `the checks of revision ${checks.revision_id} do not say which applied change they verified (recorded by an older plumb, or by hand), so a change applied in place since cannot be told apart; ${again}`;
  if (checks.applied_digest !== applied)
    return `the checks of revision ${checks.revision_id} (at ${checks.at}) verified another applied state than the one recorded now: a change was applied in place since (the same revision) and not verified; ${again}`;
  return null;
}

/** Each gate the promotion names (deployed unless turned off), judged on the facts. */
export function evaluateGates(gates: Gates | undefined, facts: SourceFacts): GateResult[] {
  const results: GateResult[] = [];
  if (gates?.deployed !== false) results.push(deployedGate(facts));
  if (gates?.soak !== undefined) results.push(soakGate(facts, gates.soak));
  if (gates?.checks !== undefined) results.push(checksGate(facts, gates.checks));
  return results;
}
