import { dirname, resolve } from "node:path";
import { PlumbError } from "../errors.js";
import type { LoadResult } from "../manifest/load.js";
import type { LoadedEnvironment } from "../manifest/types.js";
import type { ConnectionFlags } from "./options.js";
import {
  deploymentsOfTree,
  type ResolvedEnvironment,
  resolvedCollisionMessage,
  resolvedNameCollision,
} from "../manifest/rules/environment/environment-names.js";
import { type ApiOptions, readApiOptions, sendableKey, sendableTenant } from "../api/config.js";
import { ApiError, withSettingHints } from "../api/errors.js";
import { settingHintsOf, whereIs } from "../reconcile/environment-hints.js";
import { type AllowFlags, allowedOriginsFrom } from "../api/allowed-origins.js";
import { pinnedUrlsOf } from "./environment-settings/pinned-urls.js";
import { readSetting, type Setting } from "./environment-settings/read-setting.js";

export { pinnedUrlsOf } from "./environment-settings/pinned-urls.js";

// An Environment's API settings as a run reads them (docs/environments.md): its URL, key, tenant,
// mode and platform URL, where the key goes checked first; the check that two environments do not
// resolve to one control plane and one deployment name; the hints of its API errors.

const SETTINGS = ["PLUMB_API_URL", "PLUMB_API_KEY", "PLUMB_TENANT_ID", "PLUMB_PLATFORM_URL", "PLUMB_MODE"];

/**
 * Refuses (environment-name-collision) before anything is sent when two environments' settings
 * resolve here to one control plane (the same URL, tenant and key, however written: validate
 * compares them as written) and both would use one deployment name there: each one's apply would
 * change the other's deployment, and a prune of one would delete it. An environment whose settings
 * cannot be read here (a variable not set) is not compared. No value is printed.
 */
export function refuseSharedNames(
  tree: LoadResult,
  root: string,
  env: NodeJS.ProcessEnv,
  allow: AllowFlags,
): void {
  const defined = tree.environments ?? [];
  if (defined.length < 2) return;
  const resolved: ResolvedEnvironment[] = [];
  for (const environment of defined) {
    try {
      const { flags, env: own } = settingsOf(environment, root, env, allow);
      const { name } = environment.manifest.metadata;
      const suffix = environment.manifest.spec.name_suffix ?? "";
      resolved.push({
        name,
        suffix,
        url: flags.apiUrl ?? "",
        ...(flags.tenantId ? { tenant: flags.tenantId } : {}),
        key: own.PLUMB_API_KEY ?? "",
      });
    } catch {
      // Not readable here: it is not compared (its own run says why, when selected).
    }
  }
  const collision = resolvedNameCollision(resolved, deploymentsOfTree(tree.manifests));
  if (collision) throw new PlumbError("environment-name-collision", resolvedCollisionMessage(collision));
}

/**
 * An API error of an environment's run with its hint pointing at that Environment's settings: the
 * client's hints name PLUMB_API_KEY, PLUMB_TENANT_ID and PLUMB_API_URL, which a run with
 * environments does not read (a 401 said "check PLUMB_API_KEY" for a key read from $PROD_API_KEY).
 * The same hints as the controller's clients carry (src/reconcile/environment-hints.ts).
 */
export function withEnvironmentHint(error: unknown, environment: LoadedEnvironment): unknown {
  return error instanceof ApiError ? withSettingHints(error, settingHintsOf(environment)) : error;
}

/**
 * An Environment's API settings as the flags and variables the session reads (docs/environments.md).
 * Where the key goes is read and checked first (pinnedUrlsOf), before the key or the tenant is read:
 * with an allowlist, a merged Environment naming a token file and its author's URL reads nothing
 * and sends nothing.
 */
export function settingsOf(
  environment: LoadedEnvironment,
  root: string,
  env: NodeJS.ProcessEnv,
  allow: AllowFlags = {},
) {
  const { spec } = environment.manifest;
  const { apiUrl, platformUrl } = pinnedUrlsOf(environment, root, env, allow);
  const read = (field: string, setting: Setting) => readSetting(environment, root, env, field, setting);
  const own: NodeJS.ProcessEnv = { ...env };
  for (const name of SETTINGS) delete own[name];
  // Checked as the client checks a key, said as the Environment's: the client named --api-key-file
  // or PLUMB_API_KEY, which a run with environments does not read.
  own.PLUMB_API_KEY = sendableKey(read("api_key", spec.api_key), settingHintsOf(environment).apiKey);
  const flags: ConnectionFlags & { mode?: string } = {
    apiUrl,
    // Read again on a 401 (ApiOptions.apiKeyFile): a key rotated in its file needs no restart.
    apiKeyFile:
      typeof spec.api_key === "object" && "file" in spec.api_key
        ? resolve(root, dirname(environment.file), spec.api_key.file)
        : undefined,
    tenantId:
      spec.tenant_id === undefined
        ? undefined
        : sendableTenant(
            read("tenant_id", spec.tenant_id),
            `environment ${environment.manifest.metadata.name}'s spec.tenant_id (${whereIs(environment, "tenant_id")})`,
          ),
    platformUrl,
    mode: spec.mode,
    // The session checks its URLs again, and the transport every URL it sends the key to.
    ...(allow.allowApiOrigin?.length ? { allowApiOrigin: [...allow.allowApiOrigin] } : {}),
  };
  return { flags, env: own };
}

/**
 * The controller's reader of each Environment's API settings, as plan --env reads them; `unpinned`
 * is called once, at the first Environment read, when no allowlist of origins is given.
 */
export function environmentApiReader(
  flags: ConnectionFlags & { mode?: string },
  env: NodeJS.ProcessEnv,
  unpinned: () => void,
): (environment: LoadedEnvironment, root: string) => ApiOptions {
  let told = false;
  return (environment, root) => {
    if (!told && !allowedOriginsFrom(flags, env)) unpinned();
    told = true;
    const settings = settingsOf(environment, root, env, flags);
    return readApiOptions(settings.env, { ...flags, ...settings.flags });
  };
}
