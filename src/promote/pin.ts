import { REDACTED } from "../api/secret-redactor.js";
import { escapeControls } from "../manifest/format/format.js";
import type { SourceRevisionConfig } from "../schema/deployment.js";

// Whether a revision's source names one fixed version (docs/environments.md, "Promotion"): only
// such a version may be promoted, or prod would follow whatever the name points to next. The value
// comes from the source environment's control plane and goes into git, so it must also be a
// version at all: a name git or a registry would take, on one line. Pure.
//
// - repo_ref: the API reads a bare name as a branch and a tag as `refs/tags/NAME` (spec 2.3), so
//   `refs/tags/…` and a full commit id (40 hex digits, or 64 for SHA-256 repositories) are
//   pinned; any other name, `v1.4.2` included, is a branch as far as the API is concerned. NAME
//   must be a valid ref name (git check-ref-format: no space, control character, `~^:?*[\`, `..`,
//   `@{`, `//`, no part starting with `.` or ending with `.lock`).
// - image_uri: an image reference as registries parse it (lowercase path components, an optional
//   registry host and port, a tag of at most 128 word characters, `.` and `-`, a sha256 digest);
//   a digest (`@sha256:…`) or a tag other than `latest` is pinned; no tag (which means latest) or
//   `:latest` is not.
// - every copied value (graph_config_path too): no control character, at most MAX_VALUE
//   characters.

const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const TAG_PREFIX = "refs/tags/";
/** The longest value a promotion copies into git (a path or a reference is far shorter). */
const MAX_VALUE = 1024;

const DOMAIN = String.raw`(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?`;
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const IMAGE = new RegExp(
  `^(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?<digest>@sha256:[0-9a-f]{64})?$`,
);
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The value as a reason quotes it: control characters escaped, a long one cut. */
export function quoted(value: string): string {
  const cut = value.length > 80 ? `${value.slice(0, 80)}… (${value.length} characters)` : value;
  return `"${escapeControls(cut)}"`;
}

/** Why a copied value is not written into git whatever its field, or null. */
function unwritable(field: string, value: string): string | null {
  // read-source.ts redacted a secret of the run the server put there (docs/security.md "Live values").
  if (value.includes(REDACTED))
    return `${field} ${quoted(value)} holds a secret plumb was given (shown redacted): it is never written to git`;
  if (CONTROL.test(value)) return `${field} ${quoted(value)} holds control characters: it is not a version`;
  if (value.length > MAX_VALUE)
    return `${field} ${quoted(value)} is longer than ${MAX_VALUE} characters: it is not a version`;
  return null;
}

/** Why NAME (after refs/tags/) is not a ref name git takes, or null. */
function badRefName(name: string): string | null {
  if (/[\s~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$/.test(name) || name === "@") return "is not a valid tag name";
  if (name.split("/").some((part) => part.startsWith(".") || part.endsWith(".lock")))
    return "is not a valid tag name";
  return null;
}

/** Why `repo_ref` is not pinned, or null when it is. */
export function unpinnedRepoRef(ref: string): string | null {
  const unsafe = unwritable("repo_ref", ref);
  if (unsafe) return unsafe;
  if (ref.startsWith(TAG_PREFIX) && ref.length > TAG_PREFIX.length) {
    const bad = badRefName(ref.slice(TAG_PREFIX.length));
    return bad
      ? `repo_ref ${quoted(ref)} ${bad} (git check-ref-format); pin the source to a tag git takes`
      : null;
  }
  if (COMMIT.test(ref)) return null;
  return `repo_ref ${quoted(ref)} is a branch (the API takes a bare name as a branch); pin the source to a tag (refs/tags/NAME) or a full commit id`;
}

/** Why `image_uri` is not pinned, or null when it is. */
export function unpinnedImage(uri: string): string | null {
  const unsafe = unwritable("image_uri", uri);
  if (unsafe) return unsafe;
  const match = IMAGE.exec(uri);
  if (!match)
    return `image_uri ${quoted(uri)} is not an image reference (REGISTRY/NAME:TAG or NAME@sha256:DIGEST); pin the source to a version tag or a digest`;
  const { tag, digest } = match.groups ?? {};
  if (digest !== undefined || (tag !== undefined && tag !== "latest")) return null;
  return `image_uri ${quoted(uri)} has ${tag ? "the tag latest" : "no tag (latest)"}; pin the source to a version tag or a digest (@sha256:…)`;
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
  if (typeof config.graph_config_path === "string") {
    const reason = unwritable("graph_config_path", config.graph_config_path);
    if (reason) reasons.push(reason);
  }
  return reasons;
}
