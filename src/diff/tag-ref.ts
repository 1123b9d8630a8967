import type { SourceLocation } from "../manifest/types.js";
import type { Deployment } from "../schema/deployment.js";
import type { ChangeError } from "./plan/plan-types.js";
import { isObject, type JsonObject } from "./values.js";

// Spec rule 3: build_on_push cannot be true while repo_ref is a tag (refs/tags/...). The server
// checks the state a PATCH would leave (the body's values over the stored ones) and answers 400, so
// a manifest that sets only one of the two fields can pass validate and still be refused at apply
// time. Plan refuses it first, saying which field to add to the manifest. Pure.

const isTagRef = (ref: unknown): ref is string => typeof ref === "string" && ref.startsWith("refs/tags/");

const REPO_REF = "source_revision_config.repo_ref";
const BUILD_ON_PUSH = "source_config.build_on_push";

type Locate = (path: readonly string[]) => SourceLocation;
const at = (locate: Locate, field: string) => {
  const where = locate(["spec", ...field.split(".")]);
  return `${where.file}:${where.line}`;
};

/** The error for a PATCH body that would leave build_on_push true with a tag repo_ref; null when it would not. */
export function tagBuildOnPushError(body: JsonObject, live: Deployment, locate: Locate): ChangeError | null {
  const sent = (section: string, key: string): unknown => {
    const part = body[section];
    return isObject(part) ? part[key] : undefined;
  };
  const sentRef = sent("source_revision_config", "repo_ref");
  const sentBuildOnPush = sent("source_config", "build_on_push");
  const liveRef = live.source_revision_config.repo_ref ?? null;
  const liveBuildOnPush = live.source_config.build_on_push ?? null;
  const ref = sentRef ?? liveRef;
  const buildOnPush = sentBuildOnPush ?? liveBuildOnPush;
  if (buildOnPush !== true || !isTagRef(ref)) return null;

  if (sentRef !== undefined && sentBuildOnPush === undefined) {
    return {
      field: REPO_REF,
      message: `${REPO_REF} "${ref}" is a tag, but build_on_push is true live and the manifest does not set it to false; the control plane refuses a tag while build_on_push is true (at ${at(locate, REPO_REF)}): set source_config.build_on_push: false in the manifest`,
    };
  }
  if (sentBuildOnPush !== undefined && sentRef === undefined) {
    return {
      field: BUILD_ON_PUSH,
      message: `${BUILD_ON_PUSH} cannot be true: the live repo_ref "${ref}" is a tag and the manifest does not set repo_ref (at ${at(locate, BUILD_ON_PUSH)}): set source_revision_config.repo_ref to a branch in the manifest, or keep build_on_push: false`,
    };
  }
  // Both live (a server that let it through; both in the manifest is a validate error): every PATCH is refused.
  return {
    field: BUILD_ON_PUSH,
    message: `build_on_push is true with the tag repo_ref "${ref}" live, so the control plane refuses every change to this deployment (at ${at(locate, BUILD_ON_PUSH)}): set source_config.build_on_push: false in the manifest`,
  };
}
