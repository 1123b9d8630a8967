import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The environment every git command of the controller runs with (fetches and status-branch pushes
// alike). HTTPS credentials come from PLUMB_GIT_USERNAME / PLUMB_GIT_TOKEN through a GIT_ASKPASS
// script that reads them at run time: never in argv, URLs, remote config or logs.

export type GitCredentials = {
  /** The whole environment of git child processes (the token only as PLUMB_GIT_TOKEN). */
  env: Record<string, string>;
  /** Removes the askpass script. */
  dispose(): Promise<void>;
};

/** git runs `$GIT_ASKPASS "Username for 'https://host': "` (then "Password for ...") and reads stdout. */
const ASKPASS_SCRIPT = `#!/bin/sh
case "$1" in
  *sername*) printf '%s\\n' "\${PLUMB_GIT_USERNAME:-x-access-token}" ;;
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

export async function createGitCredentials(env: NodeJS.ProcessEnv): Promise<GitCredentials> {
  const out: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
  for (const name of PASSED_ENV) if (env[name]) out[name] = env[name];
  if (!env.PLUMB_GIT_TOKEN) return { env: out, dispose: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), "plumb-askpass-"));
  const script = join(dir, "askpass.sh");
  await writeFile(script, ASKPASS_SCRIPT, { mode: 0o700 });
  await chmod(script, 0o700);
  out.GIT_ASKPASS = script;
  out.PLUMB_GIT_TOKEN = env.PLUMB_GIT_TOKEN;
  if (env.PLUMB_GIT_USERNAME) out.PLUMB_GIT_USERNAME = env.PLUMB_GIT_USERNAME;
  return { env: out, dispose: () => rm(dir, { recursive: true, force: true }) };
}
