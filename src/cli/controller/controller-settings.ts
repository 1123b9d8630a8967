import { join, resolve } from "node:path";
import type { ControllerSource } from "../../controller/controller.js";
import { hostName, isLoopback } from "../../controller/http/host-check.js";
import { type Listen, parseListen } from "../../controller/http/http-server.js";
import { PlumbError, UsageError } from "../../errors.js";
import { secretSetting } from "../flag-values.js";
import type { ConnectionFlags } from "../options.js";

// \`plumb controller\`'s flags and the settings they (or the environment) give: where the manifests
// come from and the secrets, each read from a file flag or its PLUMB_ variable.

export type Flags = ConnectionFlags & {
  /** True when --branch was given explicitly (then it beats PLUMB_GIT_BRANCH). */
  branchSet?: boolean;
  dir?: string;
  repo?: string;
  branch: string;
  path?: string;
  interval: number;
  workdir?: string;
  listen: string;
  webhookSecretFile?: string;
  driftSchedule?: string;
  selfHeal?: boolean;
  prune?: boolean;
  pruneMax?: number;
  pruneWindow?: number;
  pruneDelay?: number;
  driftBranch?: string;
  promoteBranchPrefix?: string;
  concurrency: number;
  debounce: number;
  settle: number;
  timeout: number;
  backoffMax: number;
  pollInterval: number;
  shutdownGrace: number;
  apiRateLimit?: { limit: number; windowMs: number };
  statusTokenFile?: string;
  lockLease: number;
  notify: string[];
  notifySecretFile?: string;
  publicUrl?: string;
  allowedHost: string[];
  insecureStatus?: boolean;
  /** --env NAME (repeatable): only these environments (docs/environments.md). */
  env?: string[];
};

export const webhookSecret = (flags: Flags, env: NodeJS.ProcessEnv) =>
  secretSetting("--webhook-secret-file", flags.webhookSecretFile, env.PLUMB_WEBHOOK_SECRET);

export const notifySecret = (flags: Flags, env: NodeJS.ProcessEnv) =>
  secretSetting("--notify-secret-file", flags.notifySecretFile, env.PLUMB_NOTIFY_SECRET);

/** --notify and --public-url take http(s) URLs only; the value is not echoed (webhook URLs hold secrets). */
export const httpUrl =
  (flag: string) =>
  (value: string, previous?: string[]): string[] => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(value);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !["http:", "https:"].includes(parsed.protocol))
      throw new UsageError(`${flag} expects an http(s) URL, e.g. https://hooks.example.com/plumb`);
    return [...(previous ?? []), value];
  };

export const statusToken = (flags: Flags, env: NodeJS.ProcessEnv) =>
  secretSetting("--status-token-file", flags.statusTokenFile, env.PLUMB_STATUS_TOKEN);

/** --allowed-host takes a host name (or IP), optionally with a port: no scheme, no path. */
export const allowedHostName = (value: string, previous?: string[]): string[] => {
  if (!/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(value.trim()))
    throw new UsageError(`--allowed-host expects a host name such as plumb.example.com; got "${value}"`);
  return [...(previous ?? []), value.trim()];
};

/**
 * --listen with the names it answers (--allowed-host and the --public-url host; host-check.ts adds
 * the listen host, localhost and IP literals). Without a status token, /status and the status page
 * are open to whoever reaches the address: only loopback, unless --insecure-status says so.
 */
export function listenSettings(flags: Flags, token: string | undefined): Listen {
  const listen = parseListen(flags.listen);
  if (!token && !flags.insecureStatus && !isLoopback(listen.host))
    throw new PlumbError(
      "status-unprotected",
      `--listen ${flags.listen} reaches beyond this machine and no status token is set: anyone who reaches it could read /status and the status page. ` +
        "Set PLUMB_STATUS_TOKEN (or --status-token-file), listen on 127.0.0.1, or pass --insecure-status to serve it open",
      { exitCode: 64 },
    );
  const publicHost = flags.publicUrl ? [hostName(new URL(flags.publicUrl).host)] : [];
  return { ...listen, allowedHosts: [...flags.allowedHost, ...publicHost] };
}

/** Flags win; PLUMB_MANIFEST_DIR / PLUMB_GIT_REPO / PLUMB_GIT_BRANCH / PLUMB_GIT_PATH fill in (containers). */
export function sourceOf(flags: Flags, env: NodeJS.ProcessEnv): ControllerSource {
  const dir = flags.dir ?? (flags.repo ? undefined : env.PLUMB_MANIFEST_DIR?.trim() || undefined);
  const repo = flags.repo ?? (flags.dir ? undefined : env.PLUMB_GIT_REPO?.trim() || undefined);
  if (Boolean(dir) === Boolean(repo))
    throw new UsageError(
      "give exactly one source: --dir PATH or --repo URL (or PLUMB_MANIFEST_DIR / PLUMB_GIT_REPO)",
    );
  if (dir) return { kind: "dir", dir: resolve(dir) };
  return {
    kind: "git",
    url: repo!,
    branch: flags.branchSet ? flags.branch : env.PLUMB_GIT_BRANCH?.trim() || flags.branch,
    path: flags.path ?? (env.PLUMB_GIT_PATH?.trim() || undefined),
    workDir: resolve(flags.workdir ?? join(".plumb", "checkout")),
    intervalMs: flags.interval,
  };
}
