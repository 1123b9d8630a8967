import { readFileSync } from "node:fs";
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
  /** --notify URL on the command line (warned: argv shows in ps, shell history and CI logs). */
  notify: string[];
  notifyFile?: string;
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

/**
 * --notify and --public-url take http(s) URLs only; the value is not echoed (webhook URLs hold
 * secrets). --public-url is shown in every notification's link: it must carry no user or password.
 */
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
    if (flag === "--public-url" && (parsed.username || parsed.password))
      throw new UsageError(
        "--public-url must not carry a user or password: it is the link every notification shows",
      );
    return [...(previous ?? []), value];
  };

/**
 * The --notify receivers. A webhook URL is a credential (Slack's carries its token in the path), so
 * besides --notify (argv) they come from --notify-file (one URL a line; blank lines and `#` comments
 * skipped) or, when neither flag is given, PLUMB_NOTIFY_URLS (separated by white space). A bad
 * line is named by file and line, never quoted.
 */
export function notifyUrls(flags: Flags, env: NodeJS.ProcessEnv): string[] {
  const urls = [...flags.notify];
  if (flags.notifyFile) {
    let text: string;
    try {
      text = readFileSync(flags.notifyFile, "utf8");
    } catch (error) {
      throw new UsageError(
        `cannot read --notify-file ${flags.notifyFile} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
      );
    }
    text.split(/\r?\n/).forEach((line, i) => {
      const url = line.trim();
      if (url && !url.startsWith("#"))
        urls.push(...httpUrl(`--notify-file ${flags.notifyFile}:${i + 1}`)(url));
    });
    if (urls.length === flags.notify.length)
      throw new UsageError(`--notify-file ${flags.notifyFile} names no URL`);
  }
  if (urls.length > 0) return urls;
  return (env.PLUMB_NOTIFY_URLS ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((url, i) => httpUrl(`PLUMB_NOTIFY_URLS (URL ${i + 1})`)(url));
}

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
