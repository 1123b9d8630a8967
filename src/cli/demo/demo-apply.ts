import type { ApplyIo } from "../sync/apply.js";
import { runApply } from "../sync/apply.js";
import { forEachEnvironment } from "../environments.js";

// One step of the demo: `plumb apply DIR --env NAME --yes`, in this process, with the progress
// printed as the command prints it.

export function applyEnvironment(dir: string, name: string, io: ApplyIo): Promise<number> {
  const flags = {
    target: [],
    wait: true,
    timeout: 10 * 60_000,
    concurrency: 8,
    yes: true,
    output: "text" as const,
    env: [name],
  };
  return forEachEnvironment(dir, flags, io, (f, envIo) => runApply(dir, f, { ...io, ...envIo }));
}
