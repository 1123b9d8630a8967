import { join, resolve } from "node:path";
import type { ControllerSource } from "../controller/controller.js";
import { UsageError } from "../errors.js";
import { secretSetting } from "./flag-values.js";
import type { ConnectionFlags } from "./options.js";

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
  concurrency: number;
  debounce: number;
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
