import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "./common.js";
import { SourceRevisionConfig } from "./deployment.js";

// A deployment's revisions as the control plane API returns them, and the statuses a revision goes
// through: what apply waits on and status records keep.

import { REVISION_STATUSES } from "./constants.js";

export type { RevisionStatus } from "./constants.js";

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
