import { PlumbError } from "../errors.js";

// The origin git credentials belong to: the scheme, host and port of the repository URL plumb was
// given (--repo, or the remote of the status branch). PLUMB_GIT_TOKEN is answered for it alone.

const parse = (url: string): URL | null => {
  try {
    return new URL(url);
  } catch {
    return null; // scp-like (git@host:path) or a local path: no HTTP credentials apply
  }
};

/**
 * `https://host[:port]` (lower-case, default port dropped) for an http(s) URL, null for any other.
 * A URL with a user name or password in it is refused with the fix (PlumbError "invalid-setting"):
 * a token there is sent to whatever host git is sent to, and shows in process lists and git config.
 * ssh URLs keep their user name (ssh://git@host/…), not a password.
 */
export function credentialOrigin(url: string): string | null {
  const parsed = parse(url);
  if (!parsed) return null;
  const http = parsed.protocol === "https:" || parsed.protocol === "http:";
  if (parsed.password || (http && parsed.username)) {
    throw new PlumbError(
      "invalid-setting",
      `the repository URL ${parsed.protocol}//${parsed.host}${parsed.pathname} has credentials in it; remove them from the URL and give the token in PLUMB_GIT_TOKEN (and the user name, if not x-access-token, in PLUMB_GIT_USERNAME)`,
    );
  }
  return http ? parsed.origin : null;
}
