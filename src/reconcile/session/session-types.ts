import type { ApiFlags, ApiOptions } from "../../api/config.js";
import type { SecretRedactor } from "../../api/secret-redactor.js";
import type { PlatformClient } from "../../api/platform-client.js";
import type { ManifestLoads } from "../../manifest/load.js";
import type { Clock } from "../../clock.js";
import type { ClientPorts } from "../../apply/api/api-adapter.js";
import type { StatusLocation } from "../../git/status/status-source.js";
import type { CheckoutQueue } from "../../git/checkout-queue.js";
import type { GitStop } from "../../git/stoppable-git.js";
import type { ObjectStatus, StatusStore } from "../../status/status-types.js";

// What a session is and is opened with: the command's I/O, its flags, and the open session.

export type SessionIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  stdin?: { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  clock?: Clock;
  /** The state lock's fence for a writer (apply): checked before each mutating request leaves. */
  beforeWrite?: () => void;
  /** One command's manifest loads, shared by its environments' plans (loadManifestsOnce). */
  manifestLoads?: ManifestLoads;
};

export type SessionFlags = ApiFlags & {
  target?: string[];
  statusDir?: string;
  statusBranch?: string;
  /** Credentials for the status branch's fetches (the controller's git source), when it needs any. */
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the status branch's fetches end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** The checkout's git queue (the controller's), where the status branch's fetch takes its turn. */
  gitQueue?: CheckoutQueue | undefined;
  /** The environment planned (docs/environments.md): its deployments resolved; none without Environments. */
  environment?: string;
  /**
   * statusDir is the default store's ENV/ (forEachEnvironment), not a --status-dir: the stores above
   * and below are read as without one (docs/status.md "Stores above and below").
   */
  statusDirOfEnvironment?: boolean;
};

export type Session = {
  root: string;
  /** The environment this session plans (docs/environments.md), when the repository defines any. */
  environment?: string;
  clock: Clock;
  location: StatusLocation;
  /** The status directory of `location` (derived, so the two cannot disagree). */
  readonly statusDir: string;
  store: StatusStore;
  /**
   * What the stores above and below PATH last applied, per object (docs/status.md "Stores above and
   * below"), read only: seen through appliedView, never written, never given to prune. Empty with
   * --status-dir.
   */
  appliedNearby: ReadonlyMap<string, ObjectStatus>;
  /** This run's secrets (tokens, the API key, each secret value as it is resolved), removed from server text. */
  redactor: SecretRedactor;
  /** Built on first use, so invalid manifests stop before API settings are needed. */
  connect(): {
    api: ApiOptions;
    ports: ClientPorts;
    /** Organization settings (the one behind ports.platform); shares the control plane's rate budget. */
    platform: PlatformClient;
  };
};
