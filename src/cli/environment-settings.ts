import { realpathSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
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
import {
  environmentCredentialMessage,
  NOT_ENVIRONMENT_SETTINGS,
} from "../manifest/rules/environment/environment-rules.js";
import { type ApiOptions, readApiOptions, sendableKey, sendableTenant } from "../api/config.js";
import { ApiError, withSettingHints } from "../api/errors.js";
import { settingHintsOf, whereIs } from "../reconcile/environment-hints.js";
import { suggest } from "../manifest/schema-check.js";
import { readSettingFile, settingFileReason } from "../api/setting-file.js";
import { type AllowFlags, allowedOriginsFrom, checkApiOrigin } from "../api/allowed-origins.js";

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

type Setting = string | { env: string } | { file: string };

/**
 * An API error of an environment's run with its hint pointing at that Environment's settings: the
 * client's hints name PLUMB_API_KEY, PLUMB_TENANT_ID and PLUMB_API_URL, which a run with
 * environments does not read (a 401 said "check PLUMB_API_KEY" for a key read from $PROD_API_KEY).
 * The same hints as the controller's clients carry (src/reconcile/environment-hints.ts).
 */
export function withEnvironmentHint(error: unknown, environment: LoadedEnvironment): unknown {
  return error instanceof ApiError ? withSettingHints(error, settingHintsOf(environment)) : error;
}

/** One connection setting's value: the literal, its variable's or its file's (relative to the document). */
function readSetting(
  environment: LoadedEnvironment,
  root: string,
  env: NodeJS.ProcessEnv,
  field: string,
  setting: Setting,
): string {
  const name = environment.manifest.metadata.name;
  if (typeof setting === "string") return setting;
  if ("env" in setting) {
    // Checked here too: the controller follows Environment documents as they are merged.
    if (NOT_ENVIRONMENT_SETTINGS.has(setting.env))
      throw new PlumbError(
        "api-config",
        `environment ${name}: ${environmentCredentialMessage(field, setting.env)}`,
      );
    const value = env[setting.env]?.trim();
    if (value) return value;
    // A misspelt variable (PROD_API_KYE) says which set one it may have meant: its name, never its
    // value; not one this Environment reads for another field (PROD_API_KEY unset, "did you mean
    // PROD_API_URL?" pointed the key at the URL's variable).
    const others = variablesOf(environment, field);
    const set = Object.keys(env).filter((key) => key !== setting.env && !others.has(key) && env[key]?.trim());
    throw new PlumbError(
      "api-config",
      `environment ${name}: spec.${field} (${whereIs(environment, field)}) reads ${setting.env}, which is not set; export it${suggest(setting.env, set)}`,
    );
  }
  const path = resolve(root, dirname(environment.file), setting.file);
  // As a secret's valueFrom.file: repository metadata (a CI checkout's .git/config holds its token)
  // is never a setting, a link into it neither. Any other file may be one (a mounted Kubernetes secret).
  if (insideGit(path))
    throw new PlumbError(
      "api-config",
      `environment ${name}: spec.${field} (${whereIs(environment, field)}) reads ${setting.file}, inside a .git directory: it is never read as a setting; keep the value in a file of its own`,
    );
  try {
    return readSettingFile(path).trim();
  } catch (error) {
    throw new PlumbError(
      "api-config",
      `environment ${name}: cannot read spec.${field} from ${setting.file} (${settingFileReason(error)}); it must be a regular file holding the value alone`,
    );
  }
}

/**
 * Where an Environment sends the key (api_url, platform_url), checked against the allowlist
 * (`allow`'s --allow-api-origin, else PLUMB_ALLOWED_API_ORIGINS) when one is given: refused with
 * api-origin-not-allowed at the setting's file:line. Reads no key.
 */
export function pinnedUrlsOf(
  environment: LoadedEnvironment,
  root: string,
  env: NodeJS.ProcessEnv,
  allow: AllowFlags,
): { apiUrl: string; platformUrl: string | undefined } {
  const { spec, metadata } = environment.manifest;
  const allowed = allowedOriginsFrom(allow, env);
  const pinned = (field: string, setting: Setting): string => {
    const url = readSetting(environment, root, env, field, setting);
    const what = `environment ${metadata.name} (${whereIs(environment, field)}): spec.${field}`;
    // Validate refuses user:password@ written in the document; from a variable or file it was said
    // as "--api-url must not carry credentials; set PLUMB_API_KEY", which this run does not read, and
    // so were a query, a fragment, another scheme and no URL at all. The value is never echoed.
    const problem = urlProblem(url);
    if (problem)
      throw new PlumbError(
        "api-config",
        `environment ${metadata.name}: spec.${field} (${typeof setting === "object" && "env" in setting ? `$${setting.env}, ` : ""}${whereIs(environment, field)}) ${problem}`,
      );
    checkApiOrigin(url, allowed, what);
    return url;
  };
  const apiUrl = pinned("api_url", spec.api_url);
  const platformUrl = spec.platform_url === undefined ? undefined : pinned("platform_url", spec.platform_url);
  return { apiUrl, platformUrl };
}

/** Whether `path`, or where its links lead, is inside a `.git` directory. */
function insideGit(path: string): boolean {
  const real = (() => {
    try {
      return realpathSync(path);
    } catch {
      return path; // not there: reading it says so
    }
  })();
  return [path, real].some((p) => p.split(sep).includes(".git"));
}

/** What the client would refuse in an Environment's URL, said as its setting's (the URL never printed). */
function urlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a URL; expected e.g. https://api.example.com";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must be an http or https URL";
  if (parsed.username !== "" || parsed.password !== "")
    return "carries credentials (user:password@host); remove them: the key goes in spec.api_key ({env: VAR} or {file: PATH})";
  if (parsed.search !== "" || parsed.hash !== "")
    return "must not carry a query (?...) or a fragment (#...): plumb appends the API's paths to it; give the base URL";
  return undefined;
}

/** The variables an Environment's settings other than `field` read ({env: VAR}). */
function variablesOf(environment: LoadedEnvironment, field: string): Set<string> {
  const settings = Object.entries(environment.manifest.spec).filter(([key]) => key !== field);
  return new Set(
    settings.flatMap(([, value]) =>
      value !== null && typeof value === "object" && typeof (value as { env?: unknown }).env === "string"
        ? [(value as { env: string }).env]
        : [],
    ),
  );
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
