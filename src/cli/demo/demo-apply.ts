import type { ApplyIo } from "../sync/apply.js";
import { runApply } from "../sync/apply.js";
import { forEachEnvironment } from "../environments.js";

// The demo's applies: `plumb apply DIR --env NAME --yes`, in this process, with the progress
// printed as the command prints it; several environments through apply's own loop over them.

const flags = {
  target: [],
  wait: true,
  timeout: 10 * 60_000,
  concurrency: 8,
  yes: true,
  output: "text" as const,
};

/**
 * `plumb apply DIR --env A --env B ... --yes`: the environments in promotion order, each announced by
 * `announce` before it runs; as apply does, one that does not converge (or fails) stops the loop, and
 * the environments after it are not applied, which stderr says.
 */
export function applyEnvironments(
  dir: string,
  names: string[],
  io: ApplyIo,
  announce: (name: string) => void = () => undefined,
): Promise<number> {
  const each: typeof flags & { env: string[]; environment?: string } = { ...flags, env: names };
  return forEachEnvironment(
    dir,
    each,
    io,
    (f, envIo) => {
      announce(f.environment ?? "");
      return runApply(dir, f, { ...io, ...envIo });
    },
    { stopOnFailure: true },
  );
}
