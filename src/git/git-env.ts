import { simpleGit } from "./simple-git.js";
import type { UrlCredentials } from "./git-origin.js";
import {
  createGitCredentials,
  ASKPASS_ENV,
  type GitCredentials,
  PASSED_ENV,
  withConfigEntries,
} from "./git-credentials.js";

// The environment of the status branch's git commands (its temporary clone, fetches, ls-remote and
// pushes, and the lease). They run outside the user's checkout, so they would not see its local
// credential setup; they get it here, never through argv (visible in `ps`), a URL or a log line:
// - `http.*.extraheader` and `credential.*` entries of the repository's own config (what
//   actions/checkout writes to .git/config), passed as GIT_CONFIG_COUNT/KEY_n/VALUE_n;
// - GIT_ASKPASS, credential helpers of the user's global config, SSH agents: inherited as they are;
// - PLUMB_GIT_USERNAME / PLUMB_GIT_TOKEN: through the askpass script the controller uses too, for
//   the remote's origin only; and git follows no redirect (git-credentials.ts);
// - a user name and password in the remote's URL (`https://gitlab-ci-token:TOKEN@host/…`, as GitLab
//   CI leaves a checkout): taken out of the URL (status-branch.ts repoInfo) and given by that askpass,
//   unless PLUMB_GIT_TOKEN is set (then it is given instead).

export type StatusGitEnv = { env: Record<string, string>; dispose(): Promise<void> };

const INHERITED = /^(http\..*extraheader|credential\..*)$/i;
const INHERITED_ENV =
  /^(GIT_ASKPASS|SSH_ASKPASS|XDG_CONFIG_HOME|GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM|COUNT|KEY_\d+|VALUE_\d+))$/;

/** The repository's local credential entries as (key, value) pairs; none outside a repository. */
async function localCredentialConfig(top: string): Promise<Array<[string, string]>> {
  const out = await simpleGit(top)
    .raw(["config", "--local", "--null", "--list"])
    .catch(() => "");
  const pairs: Array<[string, string]> = [];
  for (const entry of out.split("\0").filter(Boolean)) {
    const newline = entry.indexOf("\n");
    const key = newline < 0 ? entry : entry.slice(0, newline);
    if (INHERITED.test(key)) pairs.push([key, newline < 0 ? "" : entry.slice(newline + 1)]);
  }
  return pairs;
}

/**
 * `base`: the controller's git environment (its askpass), else this process's environment plus an
 * askpass for PLUMB_GIT_TOKEN when set, answering for `repo.source`'s origin only. Never prompts on
 * a terminal: a missing credential fails.
 */
export async function statusGitEnv(
  repo: { top: string; source: string; sourceCredentials?: UrlCredentials | undefined },
  base: Record<string, string> | undefined,
  processEnv: NodeJS.ProcessEnv = process.env,
): Promise<StatusGitEnv> {
  let credentials: GitCredentials | undefined;
  let env: Record<string, string>;
  if (base) env = { ...base };
  else {
    // What git needs to find the user's own credential setup; not editors, pagers or hooks.
    env = Object.fromEntries(
      Object.entries(processEnv).filter(
        (e): e is [string, string] =>
          e[1] !== undefined && (PASSED_ENV.includes(e[0]) || INHERITED_ENV.test(e[0])),
      ),
    );
    env = withConfigEntries(env);
    // PLUMB_GIT_TOKEN, given for plumb, wins over the remote's own (GitLab CI's read-only job token).
    const given = processEnv.PLUMB_GIT_TOKEN ? undefined : repo.sourceCredentials;
    if (processEnv.PLUMB_GIT_TOKEN || given) {
      credentials = await createGitCredentials(processEnv, repo.source, given);
      for (const key of ASKPASS_ENV) if (credentials.env[key] !== undefined) env[key] = credentials.env[key];
    }
  }
  env.GIT_TERMINAL_PROMPT = "0";
  return {
    env: withConfigEntries(env, await localCredentialConfig(repo.top)),
    dispose: async () => credentials?.dispose(),
  };
}
