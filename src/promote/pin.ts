import type { SourceRevisionConfig } from "../schema/deployment.js";

// Whether a revision's source names one fixed version (docs/environments.md, "Promotion"): only
// such a version may be promoted, or prod would follow whatever the name points to next. Pure.
//
// - repo_ref: the API reads a bare name as a branch and a tag as `refs/tags/NAME` (spec 2.3), so
//   `refs/tags/…` and a full commit id (40 hex digits, or 64 for SHA-256 repositories) are
//   pinned; any other name, `v1.4.2` included, is a branch as far as the API is concerned.
// - image_uri: a digest (`@sha256:…`) or a tag other than `latest` is pinned; no tag (which
//   means latest) or `:latest` is not.

const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const TAG_PREFIX = "refs/tags/";

/** Why `repo_ref` is not pinned, or null when it is. */
export function unpinnedRepoRef(ref: string): string | null {
  if (ref.startsWith(TAG_PREFIX) && ref.length > TAG_PREFIX.length) return null;
  if (COMMIT.test(ref)) return null;
  return `repo_ref "${ref}" is a branch (the API takes a bare name as a branch); pin the source to a tag (refs/tags/NAME) or a full commit id`;
}

/** Why `image_uri` is not pinned, or null when it is. */
export function unpinnedImage(uri: string): string | null {
  if (/@sha256:[0-9a-f]{64}$/.test(uri)) return null;
  const lastPart = uri.slice(uri.lastIndexOf("/") + 1);
  const colon = lastPart.lastIndexOf(":");
  const tag = colon < 0 ? null : lastPart.slice(colon + 1);
  if (tag !== null && tag !== "" && tag !== "latest") return null;
  return `image_uri "${uri}" has ${tag ? "the tag latest" : "no tag (latest)"}; pin the source to a version tag or a digest (@sha256:…)`;
}

/** Every reason the revision's source is not one fixed version (empty when it is pinned). */
export function unpinnedReasons(config: SourceRevisionConfig): string[] {
  const reasons: string[] = [];
  if (typeof config.repo_ref === "string") {
    const reason = unpinnedRepoRef(config.repo_ref);
    if (reason) reasons.push(reason);
  }
  if (typeof config.image_uri === "string") {
    const reason = unpinnedImage(config.image_uri);
    if (reason) reasons.push(reason);
  }
  return reasons;
}
