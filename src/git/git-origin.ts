import { PlumbError } from "../errors.js";
import { TOKEN_MARKER, TOKEN_SHAPES, tokenInUrl } from "../url-tokens.js";

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
      `the repository URL ${redactUrl(url)} has credentials in it; remove them from the URL and give the token in PLUMB_GIT_TOKEN (and the user name, if not x-access-token, in PLUMB_GIT_USERNAME)`,
    );
  }
  refuseUrlToken(url);
  return http ? parsed.origin : null;
}

/**
 * A token git can only send inside the URL (a query parameter, a path segment after
 * x-access-token, a ghp_ token: url-tokens.ts) is refused: every git process that talks to the
 * remote has the whole URL in its argv (`git-remote-https origin URL`, even when the URL came from
 * config or a url.*.insteadOf), which `ps` shows every user, and a clone keeps it in .git/config.
 */
function refuseUrlToken(url: string): void {
  const token = tokenInUrl(url);
  if (!token) return;
  throw new PlumbError(
    "invalid-setting",
    `the repository URL ${redactUrl(url)} has a token in it (${token}); git would show it to every user of the machine in its process list and keep it in the checkout's .git/config: remove it from the URL and give the token in PLUMB_GIT_TOKEN (and the user name, if not x-access-token, in PLUMB_GIT_USERNAME)`,
  );
}

/** A remote's user name and password, as git would send them (decoded). */
export type UrlCredentials = { username: string; password: string };

/**
 * A remote found in a repository's config (the status branch's) as plumb hands it to git: an
 * http(s) URL's user name and password taken out, for an askpass to give its origin alone
 * (git-env.ts), so that neither reaches the argv of plumb's git commands (ls-remote, clone, push,
 * and the `git-remote-https` each starts). A token git can only send in the URL is refused.
 */
export function splitRemote(url: string): { url: string; credentials?: UrlCredentials } {
  const parsed = parse(url);
  const http = parsed?.protocol === "https:" || parsed?.protocol === "http:";
  if (!parsed || !http) return { url };
  const username = decoded(parsed.username);
  if ((!parsed.username || ACCOUNT.test(username)) && !parsed.password) {
    refuseUrlToken(url); // no credential, or an account's name alone (git asks its helpers for a password)
    return { url };
  }
  // A token as the user name (https://TOKEN@host/…) is given as the password: git's password prompt,
  // the askpass's argv, names the user (`Password for 'https://USER@host': `).
  const credentials = parsed.password
    ? { username, password: decoded(parsed.password) }
    : { username: "x-access-token", password: username };
  parsed.username = "";
  parsed.password = "";
  refuseUrlToken(parsed.href);
  return { url: parsed.href, credentials };
}

const HIDDEN = "****";

/** A user name that is an account's (ssh://git@host, https://alice@host), not a token. */
const ACCOUNT = /^[a-z][a-z0-9._-]{0,31}$/;

/** Collects what it hides: the pieces are searched for in git's own words too (gitFailure). */
type Hider = { hide(piece: string): string; secrets: string[] };
const hider = (): Hider => {
  const secrets: string[] = [];
  return {
    secrets,
    hide: (piece) => {
      if (piece) secrets.push(piece);
      return HIDDEN;
    },
  };
};

/** One path segment with what could be a credential in it hidden; `afterMarker`: the segment before named a token. */
function redactSegment(segment: string, afterMarker: boolean, h: Hider): string {
  if (afterMarker && segment) return h.hide(segment);
  const lower = segment.toLowerCase();
  const at = Math.max(segment.lastIndexOf("@"), lower.lastIndexOf("%40"));
  if (at > 0) return `${h.hide(segment.slice(0, at))}${segment.slice(at)}`;
  const marked = /^([^:=]+)[:=](.+)$/.exec(segment);
  if (marked && TOKEN_MARKER.test(marked[1]!)) return `${marked[1]}:${h.hide(marked[2]!)}`;
  return segment;
}

/** `a=1&b` as `a=****&****`: a query in a remote URL is there to carry a token. */
const redactQuery = (query: string, h: Hider): string =>
  query
    .split("&")
    .map((part) => {
      const eq = part.indexOf("=");
      if (eq < 0) return part && h.hide(part);
      return `${part.slice(0, eq)}=${part.length > eq + 1 ? h.hide(part.slice(eq + 1)) : ""}`;
    })
    .join("&");

const hideShapes = (text: string, h: Hider) => text.replace(TOKEN_SHAPES, (token) => h.hide(token));

function redactParsed(parsed: URL, h: Hider): string {
  // Over ssh a user name alone is an account (ssh://git@host, ssh://deploy@host), no credential;
  // over http(s) it is often the token itself (https://TOKEN@github.com).
  const http = parsed.protocol === "https:" || parsed.protocol === "http:";
  const account = !http && !parsed.password && ACCOUNT.test(parsed.username);
  if ((parsed.username || parsed.password) && !account) {
    h.hide(decoded(parsed.username));
    h.hide(decoded(parsed.password));
    parsed.username = HIDDEN;
    parsed.password = "";
  }
  let marker = false;
  parsed.pathname = parsed.pathname
    .split("/")
    .map((segment) => {
      const shown = redactSegment(segment, marker, h);
      marker = TOKEN_MARKER.test(segment);
      return shown;
    })
    .join("/");
  if (parsed.search) parsed.search = redactQuery(parsed.search.slice(1), h);
  if (parsed.hash) parsed.hash = h.hide(parsed.hash.slice(1));
  return hideShapes(parsed.href, h);
}

/** A remote URL that does not parse as one (scp-like, a local path): userinfo, query and token shapes. */
const redactUnparsed = (url: string, h: Hider): string =>
  hideShapes(
    url
      .replace(/\/\/([^/@\s]*)@/g, (_all, user: string) => `//${h.hide(user)}@`)
      .replace(/\?([^#\s]*)/, (_all, query: string) => `?${redactQuery(query, h)}`)
      .replace(/#(\S*)/, (_all, hash: string) => `#${h.hide(hash)}`),
    h,
  );

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * A git remote as plumb shows it (errors, logs, the status page, /status) and the credentials it
 * hid: user:password, query values, a fragment, a path segment holding a credential (before an `@`,
 * after a token marker such as `x-access-token`) and tokens of a known shape. An scp-like remote
 * (git@host:path) keeps its user name, which is no secret.
 */
export function redactRemote(url: string): { shown: string; secrets: string[] } {
  const h = hider();
  const parsed = parse(url);
  const shown = parsed?.host ? redactParsed(parsed, h) : redactUnparsed(url, h);
  return { shown, secrets: h.secrets.filter((s) => s !== HIDDEN && s.length >= 4) };
}

export const redactUrl = (url: string): string => redactRemote(url).shown;

/** Each URL in `text` (git's messages quote the remote) redacted as redactUrl does. */
export const redactUrlsIn = (text: string): string =>
  text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>`]+/gi, (url) => {
      // git ends a quoted URL with a slash, or a sentence after it: keep the punctuation outside.
      const tail = /[.,;:)]*$/.exec(url)![0];
      return redactUrl(url.slice(0, url.length - tail.length)) + tail;
    })
    .replace(/\/\/[^/@\s'"]*@/g, `//${HIDDEN}@`)
    .replace(TOKEN_SHAPES, HIDDEN);
