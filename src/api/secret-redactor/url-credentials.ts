import { REDACTED } from "./redaction-limits.js";

// The credentials a live value's URLs carry before their host, which no run was told of.

/** A user name that is an account, not a token (`ssh://git@host`): kept. */
const PLAIN_USER = /^[a-z][a-z0-9._-]{0,31}$/;

/**
 * A live value's URLs without the credentials before their host (`https://robot:TOKEN@registry/`,
 * `https://ghp_…@github.com/`): not a secret the run knows, yet a credential plan would print and
 * drift --write or promote would write into git. A plain user name alone stays. Linear: each
 * `://` is read to the end of its authority once.
 */
export function withoutUrlCredentials(text: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let end = at + 3;
    while (end < text.length && !/[/?#\s]/.test(text[end]!)) end += 1;
    const userinfo = text.slice(at + 3, end).lastIndexOf("@");
    if (userinfo < 0) continue;
    const user = text.slice(at + 3, at + 3 + userinfo);
    if (PLAIN_USER.test(user)) continue;
    out += `${text.slice(from, at + 3)}${REDACTED}`;
    from = at + 3 + userinfo;
  }
  return from === 0 ? text : out + text.slice(from);
}
