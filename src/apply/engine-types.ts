import type { LimitFunction } from "p-limit";
import type { Clock } from "../clock.js";
import type { PlannedChange } from "../diff/plan/plan-types.js";
import type { SecretFingerprints } from "../diff/secrets/secret-fingerprint.js";
import type { Deployment } from "../schema/deployment.js";
import type { ObjectStatus, PendingIntent } from "../status/status-types.js";
import type { ApplyObject, ApplyOptions, ApplyResult } from "./apply-types.js";
import type { ApplyPorts } from "./ports.js";
import type { createRevisionWatcher } from "./revision-watcher.js";

// The engine's working state, shared by its step files (apply-steps, apply-records, send-change,
// upload-source) so that none of them imports another only for a type.

/** What one apply run shares across its objects. */
export type Engine = {
  ports: ApplyPorts;
  options: ApplyOptions;
  random: () => number;
  elapsed: () => number;
  sendLimit: LimitFunction;
  verifyLimit: LimitFunction;
  watcher: ReturnType<typeof createRevisionWatcher>;
  /** Deployment id → object, so the watcher's status reports reach the right progress line. */
  waitingOn: Map<string, { kind: PlannedChange["kind"]; name: string }>;
};

/** What the engine knows about one object so far. */
export type ObjectRun = {
  object: ApplyObject;
  previous: ObjectStatus | undefined;
  result: ApplyResult;
  deployment: Deployment | null;
  /** True once a request reached the server (or may have), so the record says it was applied. */
  sent: boolean;
  /** Fingerprints of the secrets sent; started once the send settled (scrypt, off the main thread). */
  fingerprints: Promise<SecretFingerprints | undefined>;
  sourceUpload?: { digest: string; object_path: string } | undefined;
  /** The write-ahead intent recorded before sending; kept in the record until the send is known. */
  intent?: PendingIntent | undefined;
};

/** What sending one change needs besides the ports. */
export type SendContext = {
  clock: Clock;
  random: () => number;
  signal?: AbortSignal | undefined;
  /** The content to upload when the change carries an upload (see ApplyObject.source). */
  source?: ApplyObject["source"];
  /** Told as soon as a create succeeded, so a later failure (upload, PATCH) still knows the id. */
  onCreated?: (deployment: Deployment) => void;
};
