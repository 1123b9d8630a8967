import { PlumbError } from "../../errors.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import { whereIs } from "../../reconcile/environment-hints.js";
import { type AllowFlags, allowedOriginsFrom, checkApiOrigin } from "../../api/allowed-origins.js";
import { readSetting, type Setting } from "./read-setting.js";

// Where an Environment sends the key (environment-settings.ts): its URLs read, their shape and
// origin checked before any key is read.

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
