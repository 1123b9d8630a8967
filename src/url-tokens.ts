// Where a URL carries a credential other than user:password: a query parameter named for one
// (?access_token=…), a path segment after a token marker (/x-access-token/TOKEN/…), or a token of a
// git host's known shape anywhere (ghp_…, glpat-…). Shared by git's redaction of remotes
// (git/git-origin.ts), which hides these and more (any query value, a segment before an `@`, after
// `auth` or `token`: hiding too much there costs nothing), and the checks that refuse a URL
// outright (manifest rules, import), which look only for what is a credential without doubt: a
// repository under an organisation named `token`, or an agent URL with an `@` in its path, is no
// secret and must not be refused.

/** Path segments after which (or before `:`/`=` in which) a remote's path writes a token. */
export const TOKEN_MARKER =
  /^(?:x-access-token|x-oauth-basic|oauth2?|token|access[-_]?token|private[-_]?token|api[-_]?key|bearer|auth)$/i;

/** Token shapes of git hosts (GitHub, GitLab, Bitbucket app passwords), wherever they appear. Global: use with replace. */
export const TOKEN_SHAPES =
  /(?:gh[pousr]_[A-Za-z0-9_]{16,}|github_pat_[A-Za-z0-9_]{16,}|(?:glpat|gldt|glrt|glptt|glft|glimt|glsoat|glcbt|glffct|glagent)-[A-Za-z0-9_-]{16,}|ATBB[A-Za-z0-9_-]{20,})/g;

/** Path segments that only ever precede a token (a refusal reads these, redaction TOKEN_MARKER). */
const SURE_MARKER = /^(?:x-access-token|x-oauth-basic|access[-_]token|private[-_]token)$/i;

/** Query parameters that carry a credential (a signed URL's signature among them). */
const TOKEN_PARAM =
  /^(?:access[-_]?token|token|private[-_]?token|api[-_]?key|apikey|key|auth|authorization|password|passwd|secret|client[-_]?secret|sig|signature|x-amz-signature|x-goog-signature)$/i;

/**
 * What in `value` (a URL) is a credential besides user:password, said without the credential:
 * `query parameter access_token`, `path segment after x-access-token`, `a ghp_ token`; undefined
 * when nothing is, or when `value` is no URL.
 */
export function tokenInUrl(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  for (const name of url.searchParams.keys())
    if (TOKEN_PARAM.test(name) && url.searchParams.get(name)) return `query parameter ${name}`;
  let after: string | undefined;
  // Only a URL with a host has a path of segments (mailto:a@b.example, urn:… have none).
  for (const segment of url.host ? url.pathname.split("/") : []) {
    if (after !== undefined && segment) return `path segment after ${after}`;
    const marked = /^([^:=]+)[:=](.+)$/.exec(segment);
    if (marked && SURE_MARKER.test(marked[1]!)) return `path segment after ${marked[1]}`;
    after = SURE_MARKER.test(segment) ? segment : undefined;
  }
  const shape = new RegExp(TOKEN_SHAPES.source).exec(value)?.[0];
  return shape ? `a ${shape.slice(0, shape.search(/[_-]/) + 1)} token` : undefined;
}
