import { realpathSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
import { PlumbError } from "../../errors.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import {
  environmentCredentialMessage,
  NOT_ENVIRONMENT_SETTINGS,
} from "../../manifest/rules/environment/environment-rules.js";
import { whereIs } from "../../reconcile/environment-hints.js";
import { suggest } from "../../manifest/schema-check.js";
import { readSettingFile, settingFileReason } from "../../api/setting-file.js";

// One of an Environment's settings read (environment-settings.ts): the literal, its variable's value
// or its file's, each refusal naming the setting and where it is written, never a value.

export type Setting = string | { env: string } | { file: string };

/** One connection setting's value: the literal, its variable's or its file's (relative to the document). */
export function readSetting(
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
