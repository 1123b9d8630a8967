import type { DeploymentRecord } from "../record.js";

// What the deployments store hands the journal and the snapshot: its changes and its whole state.

export type TracingProject = { id: string; name: string };
/** One durable change: a whole deployment record (upsert), or a tracing project. */
export type StoreChange =
  { k: "dep"; v: DeploymentRecord } | { k: "session"; tenant: string; v: TracingProject };
export type StoreSnapshot = {
  deployments: DeploymentRecord[];
  sessions: Array<{ tenant: string; v: TracingProject }>;
};
