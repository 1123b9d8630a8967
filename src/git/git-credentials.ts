import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentialOrigin, redactRemote, redactUrlsIn, type UrlCredentials } from "./git-origin.js";

// The environment every git command of the controller runs with (fetches and status-branch pushes
// alike). HTTPS credentials come from PLUMB_GIT_USERNAME / PLUMB_GIT_TOKEN through a GIT_ASKPASS
// script that reads them at run time: never in argv, URLs, remote config or logs. They are given
// only to the origin (scheme, host, port) of the configured repository, and git follows no redirect
// (http.followRedirects=false), so a server that redirects elsewhere gets no token.

export type GitCredentials = {
  /** The whole environment of git child processes (the token only as PLUMB_GIT_TOKEN). */
  env: Record<string, string>;
  /** Removes the askpass script. */
  dispose(): Promise<void>;
};

/**
 * git runs `$GIT_ASKPASS "Username for 'https://host': "` (then "Password for 'https://user@host':
 * "), the URL being the one it is about to send to. The script answers only when that URL's origin
 * (userinfo and path removed, host lower-cased, default port dropped) is PLUMB_GIT_ORIGIN.
 */
const ASKPASS_SCRIPT = `#!/bin/sh
url=\${1#*"'"}
url=\${url%"'"*}
scheme=\${url%%://*}
rest=\${url#*://}
host=\${rest%%/*}
host=\${host##*@}
origin=$(printf '%s://%s' "$scheme" "$host" | tr 'A-Z' 'a-z')
case "$origin" in
  https://*:443) origin=\${origin%:443} ;;
  http://*:80) origin=\${origin%:80} ;;
esac
if [ -z "$PLUMB_GIT_ORIGIN" ] || [ "$origin" != "$PLUMB_GIT_ORIGIN" ]; then
  echo "plumb: PLUMB_GIT_TOKEN is only for $PLUMB_GIT_ORIGIN, not $origin" >&2
  exit 1
fi
case "$1" in
  Username*) printf '%s\\n' "\${PLUMB_GIT_USERNAME:-x-access-token}" ;;
  *) printf '%s\\n' "\${PLUMB_GIT_TOKEN}" ;;
esac
`;

/** Passed through from the controller's environment; everything else is left out. */
export const PASSED_ENV = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "SSH_AUTH_SOCK",
];

/** What the askpass reads from git's environment. */
export const ASKPASS_ENV = ["GIT_ASKPASS", "PLUMB_GIT_ORIGIN", "PLUMB_GIT_TOKEN", "PLUMB_GIT_USERNAME"];

/**
 * git settings every plumb git command runs with: no redirect is followed, to any host; and an HTTP
 * transfer that moves less than a byte a second for 60 s is abandoned. git has no timeout of its
 * own: a server (or proxy) that accepted the connection and then said nothing held a fetch forever,
 * and with it the controller's checkout queue: no later poll or webhook fetched again, while it
 * stayed ready (docs/controller.md "How it works").
 */
const PLUMB_GIT_CONFIG: ReadonlyArray<[string, string]> = [
  ["http.followRedirects", "false"],
  ["http.lowSpeedLimit", "1"],
  ["http.lowSpeedTime", "60"],
];

/** Appends config entries (GIT_CONFIG_KEY_n/VALUE_n) to whatever GIT_CONFIG_COUNT `env` carries. */
export function withConfigEntries(
  env: Record<string, string>,
  entries: ReadonlyArray<[string, string]> = PLUMB_GIT_CONFIG,
): Record<string, string> {
  const out = { ...env };
  let count = Number.parseInt(out.GIT_CONFIG_COUNT ?? "0", 10) || 0;
  for (const [key, value] of entries) {
    out[`GIT_CONFIG_KEY_${count}`] = key;
    out[`GIT_CONFIG_VALUE_${count}`] = value;
    count += 1;
  }
  if (count > 0) out.GIT_CONFIG_COUNT = String(count);
  return out;
}

/**
 * The git environment for `repoUrl`: PASSED_ENV, no terminal prompt, no redirects, and with
 * PLUMB_GIT_TOKEN an askpass for the repository's origin only. A URL that carries credentials is
 * refused (PlumbError "invalid-setting"): they would be sent wherever git connects and shown in
 * process lists.
 */
export async function createGitCredentials(
  env: NodeJS.ProcessEnv,
  repoUrl: string,
  /** A remote's own user name and password (git-origin.ts splitRemote), in place of PLUMB_GIT_*. */
  given?: UrlCredentials,
): Promise<GitCredentials> {
  const origin = credentialOrigin(repoUrl);
  let out: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
  for (const name of PASSED_ENV) if (env[name]) out[name] = env[name];
  out = withConfigEntries(out);
  if (given && origin) return askpassFor(out, origin, given.password, given.username);
  if (!env.PLUMB_GIT_TOKEN || !origin) return { env: out, dispose: async () => {} };
  return askpassFor(out, origin, env.PLUMB_GIT_TOKEN, env.PLUMB_GIT_USERNAME);
}

/** `env` with the askpass script answering `origin` alone with `username` (else x-access-token) and `token`. */
async function askpassFor(
  env: Record<string, string>,
  origin: string,
  token: string,
  username: string | undefined,
): Promise<GitCredentials> {
  const out = { ...env };
  const dir = await mkdtemp(join(tmpdir(), "plumb-askpass-"));
  const script = join(dir, "askpass.sh");
  await writeFile(script, ASKPASS_SCRIPT, { mode: 0o700 });
  await chmod(script, 0o700);
  out.GIT_ASKPASS = script;
  out.PLUMB_GIT_ORIGIN = origin;
  out.PLUMB_GIT_TOKEN = token;
  if (username) out.PLUMB_GIT_USERNAME = username;
  return { env: out, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * PLUMB_GIT_TOKEN as git sends it and a server may echo it: as given, URL-encoded, and the Basic
 * credentials (`user:token` in base64) of its Authorization header. Empty without a token.
 */
export function gitTokenForms(env: NodeJS.ProcessEnv): string[] {
  const token = env.PLUMB_GIT_TOKEN;
  if (!token) return [];
  const user = env.PLUMB_GIT_USERNAME || "x-access-token";
  return [token, encodeURIComponent(token), Buffer.from(`${user}:${token}`).toString("base64")];
}

/**
 * `text` (git's stderr, with what the server said) with each of `secrets` replaced by ****, longest
 * first (case-insensitive: a server may echo a token upper- or lower-cased). Values shorter than 4
 * characters are left: they would match everywhere.
 */
export function hideCredentials(text: string, secrets: readonly string[]): string {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const wanted = [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  if (wanted.length === 0) return text;
  return text.replace(new RegExp(wanted.map(escape).join("|"), "gi"), "****");
}

/**
 * The credentials in a git environment that a server may echo: PLUMB_GIT_TOKEN's forms, and the
 * value of each `http.*.extraheader` config entry passed in it (git-env.ts: what actions/checkout
 * writes, `AUTHORIZATION: basic <base64 of user:token>`), the credential after its scheme, and for
 * Basic its decoded token.
 */
export function gitSecretsOf(env: Record<string, string | undefined>): string[] {
  const secrets = gitTokenForms(env);
  for (const [name, key] of Object.entries(env)) {
    const n = /^GIT_CONFIG_KEY_(\d+)$/.exec(name)?.[1];
    if (n === undefined || !key || !/extraheader$/i.test(key)) continue;
    const credential = /^[^:]+:\s*(?:\w+\s+)?(\S+)/.exec(env[`GIT_CONFIG_VALUE_${n}`] ?? "")?.[1];
    if (!credential) continue;
    const decoded = Buffer.from(credential, "base64").toString("utf8");
    const token = /^[\x20-\x7e]+:([\x21-\x7e]+)$/.exec(decoded)?.[1];
    secrets.push(credential, ...(token ? [decoded, token] : []));
  }
  return secrets;
}

/**
 * git's failure text as plumb may show it: each URL redacted as a remote is shown (git-origin.ts),
 * and the credentials of its environment (gitSecretsOf) and of the remotes in its arguments
 * removed wherever the text repeats them (git quotes the remote; a server's `remote:` lines and
 * `fatal: remote error:` may echo what it was sent).
 */
export function redactGitText(
  text: string,
  env: Record<string, string | undefined>,
  args: readonly string[],
): string {
  const remotes = args.filter((arg) => arg.includes("://") || arg.includes("@"));
  const secrets = [...gitSecretsOf(env), ...remotes.flatMap((arg) => redactRemote(arg).secrets)];
  return redactUrlsIn(hideCredentials(text, secrets));
}
