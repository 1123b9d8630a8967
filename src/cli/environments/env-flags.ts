import type { ConnectionFlags } from "../options.js";

// The flags a command run once per environment (environments.ts forEachEnvironment) reads.

export type EnvFlags = ConnectionFlags & {
  env?: string[];
  /** --target: an environment where none of these runs is skipped (said), not run. */
  target?: string[];
  mode?: string;
  output?: string;
  environment?: string;
  /** apply --keep-going: the environments after one that did not converge are applied anyway. */
  keepGoing?: boolean;
};
