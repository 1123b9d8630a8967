import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "./common.js";
import { SourceRevisionConfig } from "./deployment.js";

// A deployment's revisions as the control plane API returns them, and the statuses a revision goes
// through: what apply waits on and status records keep.

export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];
/** Terminal failures; plumb treats INTERRUPTED as failed too (decisions.md). */
export const FAILED_REVISION_STATUSES: readonly RevisionStatus[] = [
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "INTERRUPTED",
];

export const Revision = Type.Object({
  id: Type.String(),
  status: Type.Union(REVISION_STATUSES.map((s) => Type.Literal(s))),
  source: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  source_revision_config: SourceRevisionConfig,
  status_message: Nullable(Type.String()),
});
export type Revision = Static<typeof Revision>;
