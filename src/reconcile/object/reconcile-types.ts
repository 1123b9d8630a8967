import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import type { PlatformClient } from "../../api/platform-client.js";
import type { SecretRedactor } from "../../api/secret-redactor.js";
import type { Clock } from "../../clock.js";
import type { DesiredObject } from "../../diff/plan/build-plan.js";
import type { Plan, PlannedChange } from "../../diff/plan/plan-types.js";
import type { ServerFactsReader } from "../plan/server-facts.js";
import type { TaskLimit } from "../plan/plan-object.js";
import type { ApplyResult } from "../../apply/apply-types.js";
import type { DriftReason } from "../drift.js";
import type { ApplyPorts } from "../../apply/ports.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { Deployment } from "../../schema/deployment.js";

// The shapes of the controller's reconcile of one object (reconcile-object.ts).

/** Why the object is reconciled: its manifest changed (or a restart), or a drift check. */
export type ReconcileReason = "change" | "drift";

export type ReconcileContext = {
  root: string;
  env: NodeJS.ProcessEnv;
  /** The controller's redactor: learns each secret value resolved, to remove it from server text. */
  redactor: SecretRedactor;
  clock: Clock;
  ports: ApplyPorts & { controlPlane: ControlPlaneClient };
  platform: Pick<PlatformClient, "getOrganization">;
  /** The in-memory status store; `record` and `forget` keep it and the files in step. */
  statuses: Pick<ReadonlyMap<string, ObjectStatus>, "get">;
  record(status: ObjectStatus): Promise<void>;
  forget(kind: string, name: string): Promise<void>;
  gitCommit(): string | null;
  selfHeal: boolean;
  timeoutMs: number;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
  agentUrlFallback?: ((deployment: Deployment) => string | null) | undefined;
  /** Reads the installation's create rules (mode, integrations, listeners), checked before a create. */
  server?: ServerFactsReader | undefined;
  /** Bounds the scrypt fingerprint checks in flight across reconciles (libuv's threadpool is shared). */
  fingerprintLimit?: TaskLimit | undefined;
  /** Real paths of every manifest's `valueFrom.file` secrets (the snapshot's): never uploaded. */
  secretFiles?: ReadonlySet<string> | undefined;
};

export type ReconcileOutcome = {
  /** False when the object should be retried with backoff. */
  ok: boolean;
  action: PlannedChange["action"];
  /** What happened: applied, in-sync, drift-reported, skipped, failed, interrupted, timeout. */
  result: string;
  drift: DriftReason | null;
  apply: ApplyResult | null;
  /** The plan of this reconcile (the status page shows it, redacted). */
  change: PlannedChange;
};

/** One object planned against live: what the apply or the drift report starts from. */
export type PlannedObject = {
  key: string;
  desired: DesiredObject;
  deployment: Deployment | null;
  /** The record, with a crash's write-ahead intent settled against live. */
  previous: ObjectStatus | undefined;
  plan: Plan;
  planned: PlannedChange;
  drift: DriftReason | null;
};
