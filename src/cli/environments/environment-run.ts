import { join } from "node:path";
import { ApiConfigError } from "../../api/config.js";
import { resolveStatusDir } from "../../git/status/status-source.js";
import { environmentNamesAbove } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import type { SessionIo } from "../../reconcile/session.js";
import { settingsOf, withEnvironmentHint } from "../environment-settings.js";
import type { EnvFlags } from "./env-flags.js";

// One run of a command (environments.ts forEachEnvironment): in one environment, with its settings,
// flags and status store, or as before environments when the tree defines none.

/**
 * A run as before environments. With no API URL set, the refusal names the environments above PATH
 * that --env could run it in: a directory of a repository with environments whose manifests name
 * none is not pulled into them without --env ("set PLUMB_API_URL" alone sent users elsewhere).
 */
export async function runWithoutEnvironments<F extends EnvFlags>(
  path: string,
  flags: F,
  io: SessionIo,
  run: (flags: F, io: SessionIo) => Promise<number>,
): Promise<number> {
  return run(flags, io).catch(async (error: unknown) => {
    if (!(error instanceof ApiConfigError) || (flags.apiUrl ?? io.env.PLUMB_API_URL ?? "").trim() !== "")
      throw error;
    const names = await environmentNamesAbove(path, maxManifestBytesFrom(io.env));
    if (names.length === 0) throw error;
    throw new ApiConfigError(
      `${error.message}, or pass --env NAME to run in an environment defined above PATH (${names.join(", ")})`,
    );
  });
}

/** One environment's run: its settings read, its flags and store, its API errors' hints its own. */
export async function runOne<F extends EnvFlags>(
  path: string,
  root: string,
  environment: LoadedEnvironment,
  flags: F,
  io: SessionIo,
  run: (flags: F, io: SessionIo) => Promise<number>,
  connects: boolean,
): Promise<number> {
  const name = environment.manifest.metadata.name;
  const settings = connects ? settingsOf(environment, root, io.env, flags) : { flags: {}, env: io.env };
  const envFlags = {
    ...flags,
    ...settings.flags,
    environment: name,
    statusDir: join(resolveStatusDir({ root: path, statusDir: flags.statusDir }), name),
    // The default store's ENV/: the stores above and below are read too (docs/status.md).
    ...(flags.statusDir === undefined ? { statusDirOfEnvironment: true } : {}),
  };
  return run(envFlags, { ...io, env: settings.env }).catch((error: unknown) => {
    throw connects ? withEnvironmentHint(error, environment) : error;
  });
}
