import type { LoadResult } from "../../manifest/load.js";
import { countProblems } from "../../manifest/format/format.js";
import { sortProblems } from "../../manifest/validate.js";
import type { Problem } from "../../manifest/types.js";
import type { SessionIo } from "../../reconcile/session.js";
import { reportInvalidManifests } from "../../report/report-invalid.js";
import { environmentProblems } from "../offline/validate-environments.js";
import type { EnvFlags } from "./env-flags.js";

// Invalid manifests stop a command run per environment before any environment's settings are read
// or anything is sent (environments.ts).

/** The problems of the tree and of each environment --env selects (as validate finds them), when any is an error. */
export function invalidProblems(tree: LoadResult, flags: EnvFlags): Problem[] | undefined {
  const problems = sortProblems([...tree.problems, ...environmentProblems(tree, flags.env ?? [])]);
  return countProblems(problems).errors > 0 ? problems : undefined;
}

/** Reports invalid manifests as each command's run would; true when there were errors. */
export function refuseInvalid(tree: LoadResult, flags: EnvFlags, io: SessionIo): boolean {
  const problems = invalidProblems(tree, flags);
  if (!problems) return false;
  reportInvalidManifests(io.stdout, problems, flags.output ?? "text", "nothing was sent to any environment");
  return true;
}
