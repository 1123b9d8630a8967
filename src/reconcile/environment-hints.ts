import type { ApiOptions } from "../api/config.js";
import type { SettingHints } from "../api/errors.js";
import type { LoadedEnvironment } from "../manifest/types.js";

// An environment's API clients in the controller: their errors (a 401, a 403, a control plane that
// does not answer), and so its records' last_error and /status, name that Environment's setting and
// where it is read from ("check environment prod's spec.api_key ($PROD_API_KEY,
// environments/prod.yaml:7)"), never its value: the client's own hints name PLUMB_API_KEY,
// PLUMB_TENANT_ID and PLUMB_API_URL, which a controller of environments does not read. As
// withEnvironmentHint (src/cli/environments.ts) says it with the same hints for plan, apply and promote.

type Setting = string | { env: string } | { file: string };

const sourceOf = (setting: Setting): string =>
  typeof setting === "string" ? "as written" : "env" in setting ? `$${setting.env}` : `file ${setting.file}`;

export function whereIs(environment: LoadedEnvironment, field: string): string {
  const at = typeof environment.locate === "function" ? environment.locate(["spec", field]) : undefined;
  return at ? `${at.file}:${at.line}` : environment.file;
}

/** Which of an Environment's settings to check, and where each is read from. */
export function settingHintsOf(environment: LoadedEnvironment): SettingHints {
  const { metadata, spec } = environment.manifest;
  const setting = (field: string, value: Setting | undefined) =>
    value === undefined
      ? `environment ${metadata.name}'s spec.${field} (not set, ${environment.file})`
      : `environment ${metadata.name}'s spec.${field} (${sourceOf(value)}, ${whereIs(environment, field)})`;
  return {
    apiKey: setting("api_key", spec.api_key),
    tenantId: setting("tenant_id", spec.tenant_id),
    apiUrl: setting("api_url", spec.api_url),
  };
}

/** The reader of Environment API settings, its options carrying the Environment's hints. */
export function withEnvironmentHints(
  read: (environment: LoadedEnvironment, root: string) => ApiOptions,
): (environment: LoadedEnvironment, root: string) => ApiOptions {
  return (environment, root) => ({ ...read(environment, root), settingHints: settingHintsOf(environment) });
}
