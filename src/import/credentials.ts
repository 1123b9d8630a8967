import type { JsonObject } from "../diff/values.js";
import { tokenInUrl } from "../url-tokens.js";

// `plumb import` writes what a server answered into git: no credential may go with it. A URL
// naming a user or password (`https://x-access-token:TOKEN@github.com/...` as a repo_url, a
// registry login in an image_uri) is one; so is any of the run's own secrets (its API key, git or
// status token) that a hostile or echoing server put into a field. Pure: `redact` is the run's
// secret redactor, which changes a text only where it holds one of those values.

/**
 * Whether `text` holds a URL with a user or password before its host (`scheme://user:pw@host`).
 * Linear: each `://` is looked at once, up to the end of its authority. (A regular expression
 * with a scheme before it backtracked quadratically on a long run of letters: 2 MB never ended.)
 */
const AUTHORITY_END = /[/?#\s]/;

function hasUrlCredentials(text: string): boolean {
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    // The authority ends at the first '/', '?', '#' or space: each character is read once, as the
    // next '://' starts with a '/' that ends this one.
    for (let i = at + 3; i < text.length && !AUTHORITY_END.test(text[i]!); i += 1)
      if (text[i] === "@") return true;
  }
  return false;
}

/** Where in `manifest` a credential is (a field path, never its value), or undefined. */
export function credentialIn(manifest: JsonObject, redact: (text: string) => string): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: manifest, path: "" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === "string") {
      if (redact(value) !== value)
        return `${path} holds one of plumb's own credentials (its API key or a token)`;
      if (hasUrlCredentials(value)) return `${path} carries credentials (user:password@host)`;
      const token = tokenInUrl(value); // ?access_token=T, /x-access-token/T/..., a ghp_ token
      if (token) return `${path} carries credentials (${token})`;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    for (const [key, child] of Object.entries(value)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (redact(key) !== key)
        return `a key of ${path || "the manifest"} holds one of plumb's own credentials`;
      stack.push({ value: child, path: at });
    }
  }
  return undefined;
}
