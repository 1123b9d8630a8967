import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.js";

// What a standby controller does, seen from outside: its looks at the status branch's lease and its
// pushes (through a git HTTP server in front of the bare repositories under `root`), and every
// request it sends to the control plane (through a proxy). "The standby did not act" is then the
// absence of a push and of any API request after it looked at the lease, and declined, while the
// leader led: not a pause that a slow machine makes too short, nor a quick one proves nothing by.

const USER = "x-access-token";
const TOKEN = "standby-watch-token";

export type StandbyWatch = {
  /** The standby's git remote for repository `name` under root (its source URL or origin). */
  remote: (name: string) => string;
  /** The standby's git environment: its token for the server (PLUMB_GIT_TOKEN, never in a URL). */
  env: NodeJS.ProcessEnv;
  /** `git config` of a checkout whose origin is the server: its Basic auth (as actions/checkout). */
  extraHeader: [string, string];
  /** The standby's control plane URL (the proxy). */
  apiUrl: string;
  /** Looks at the lease: each fetch of refs/plumb/locks/BRANCH (one per look, src/lock/branch/lease-record.ts). */
  looks: () => number;
  /** Pushes: taking the lease is one; a standby makes none. */
  pushes: () => number;
  /** Requests to the control plane. */
  apiRequests: HoldingProxy["requests"];
  close(): Promise<void>;
};

export async function watchStandby(root: string, branch: string, cpUrl: string): Promise<StandbyWatch> {
  const counts = { looks: 0, pushes: 0 };
  // A fetch of one ref sends its name as a ref-prefix of ls-refs (protocol v2), in a small plain body.
  const prefix = `ref-prefix refs/plumb/locks/${branch}`;
  const git: GitHttpServer = await startGitHttpServer(root, USER, TOKEN, {
    seen: ({ method, url, body }) => {
      if (url.includes("git-receive-pack")) counts.pushes++;
      else if (method === "POST" && body.includes(prefix)) counts.looks++;
    },
  });
  const proxy = await startHoldingProxy(cpUrl);
  return {
    remote: (name) => `${git.url}/${name}`,
    env: { ...process.env, PLUMB_GIT_TOKEN: TOKEN },
    extraHeader: [
      `http.${git.url}/.extraheader`,
      `Authorization: Basic ${Buffer.from(`${USER}:${TOKEN}`).toString("base64")}`,
    ],
    apiUrl: proxy.url,
    looks: () => counts.looks,
    pushes: () => counts.pushes,
    apiRequests: proxy.requests,
    close: async () => {
      await git.close();
      await proxy.close();
    },
  };
}
