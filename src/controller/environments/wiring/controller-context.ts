import type { ApiOptions } from "../../../api/config.js";
import type { Logger } from "../../../logger.js";
import type { LoadedEnvironment } from "../../../manifest/types.js";
import type { ControllerStartOptions } from "../../controller-types.js";
import type { ControllerHttp } from "../../http/http-server.js";
import type { ManifestSource } from "../../source/manifest-source.js";
import type { EnvironmentClaim } from "../environment-claim.js";
import type { EnvironmentLoad } from "../environment-load.js";
import type { Rebalance } from "../rebalance.js";

// What the parts of a controller of environments share (environment-controller.ts).

export const HAND_OVER_GRACE_MS = 10_000;

/** What the environments of one controller share; `roster` and `claims` follow git. */
export type Context = {
  options: ControllerStartOptions;
  source: ManifestSource;
  http: ControllerHttp | undefined;
  log: Logger;
  base: string;
  leaseMs: number;
  environmentApi: (environment: LoadedEnvironment, root: string) => ApiOptions;
  tree: EnvironmentLoad;
  rebalance: Rebalance;
  /** The Environment documents followed (the last valid one of each), by name. */
  roster: Map<string, LoadedEnvironment>;
  /** Environments whose document in git is invalid: the first problem (the last valid one runs). */
  invalid: Map<string, string>;
  /** Environments refused while they collide with another (environment-name-collision): why. */
  refused: Map<string, string>;
  claims: EnvironmentClaim[];
  /** Claims of environments removed from git, still draining. */
  ending: Set<Promise<void>>;
  /** Started while a trigger came: rescanned once leading, so its first snapshot is not older. */
  rescanOnceStarted: Set<string>;
  nextDriftCheck: () => Date | null;
  stopping: boolean;
};

export const leadersOf = (claims: readonly EnvironmentClaim[]) =>
  claims.filter((c) => c.role() === "leader" && c.store());
