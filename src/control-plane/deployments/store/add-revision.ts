import { createHash, randomUUID } from "node:crypto";
import type { DeploymentRecord, Timing } from "../record.js";
import { clusterRefusal, forcedFailure, isSupersedable, type RevisionRecord } from "../revisions.js";

// A new revision of a deployment: its commit, its forced or refused failure, and the older ones it skips.

export function addRevision(
  record: DeploymentRecord,
  source: string,
  now: number,
  timing: Timing,
  commitSha?: string,
) {
  const id = randomUUID();
  const config = { ...record.sourceRevisionConfig };
  if (source === "gitrepo") {
    config.repo_commit_sha =
      commitSha ??
      createHash("sha1")
        .update(`${record.sourceConfig.repo_url ?? ""}#${config.repo_ref ?? ""}#${id}`)
        .digest("hex");
  }
  record.sourceRevisionConfig.repo_commit_sha = config.repo_commit_sha ?? null;
  const revision: RevisionRecord = { id, source, createdAt: now, config };
  const failure = forcedFailure(config) ?? clusterRefusal(record.sourceConfig.resource_spec);
  if (failure) revision.failure = failure;
  else if (source === "internal_source" && !config.source_tarball_path) {
    revision.failure = {
      status: "BUILD_FAILED",
      message: `No source tarball: POST /v2/deployments/${record.id}/upload-url, PUT the tarball, then PATCH source_tarball_path`,
    };
  }
  for (const older of record.revisions) {
    if (!older.skipped && isSupersedable(older, now, timing.revisionMs)) older.skipped = { at: now, by: id };
  }
  record.revisions.push(revision);
}
