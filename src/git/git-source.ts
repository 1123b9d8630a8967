import { access, lstat, mkdir, readdir, realpath } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { isOutside } from "../path-inside.js";
import type { SimpleGit } from "simple-git";
import { gitAt } from "./status/status-branch.js";
import { runStoppableGit } from "./stoppable-git.js";
import { escapeControls, PlumbError } from "../errors.js";
import {
  createGitCredentials,
  type GitCredentials,
  gitTokenForms,
  hideCredentials,
} from "./git-credentials.js";
import { redactRemote, redactUrl, redactUrlsIn } from "./git-origin.js";
import { type CheckoutQueue, createCheckoutQueue } from "./checkout-queue.js";

// Follows one branch of a git remote with shallow fetches. Credentials: see git-credentials.ts.

export type GitSourceOptions = {
  url: string;
  branch: string;
  /** Manifest directory inside the repository. */
  path?: string | undefined;
  /** Where the checkout lives (reused across restarts). */
  workDir: string;
  env: NodeJS.ProcessEnv;
  /** Shared with other git work (the status branch); when given, the caller disposes of it. */
  credentials?: GitCredentials | undefined;
  /** Ends the first clone and any fetch (their git processes killed): a controller stopped stops now. */
  signal?: AbortSignal | undefined;
};

export type GitSource = {
  checkoutDir: string;
  /** Directory the manifests are loaded from (checkout + --path). */
  manifestRoot: string;
  commit(): string;
  /**
   * The checkout's git queue (checkout-queue.ts): each fetch and reset takes a turn; whatever else
   * runs git in the checkout (the status branch's fetch, branch worktrees) must take turns in it.
   */
  queue: CheckoutQueue;
  /** Fetches the branch; resolves true when its commit moved (the checkout now shows it). */
  fetch(): Promise<boolean>;
  close(): Promise<void>;
};

/** The remote without credentials, for logs, messages, the status page and /status (git-origin.ts). */
export { redactUrl };

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Git's own message (its last 3 lines) with every URL in it redacted, and the remote's credentials
 * and PLUMB_GIT_TOKEN removed wherever they appear: git quotes the remote with its query
 * ("repository 'https://host/r.git?access_token=…/' not found") and prints what the server says
 * ("remote: …", "fatal: remote error: …"), which may echo the token it was sent.
 */
const gitFailure = (what: string, url: string, error: unknown, env: NodeJS.ProcessEnv) => {
  const remote = redactRemote(url);
  const text = hideCredentials(error instanceof Error ? error.message : String(error), [
    ...remote.secrets,
    ...gitTokenForms(env),
  ]);
  return new PlumbError(
    "git-failed",
    `${what} ${remote.shown} failed: ${redactUrlsIn(text).trim().split("\n").slice(-3).join(" ")}`,
  );
};

/** A path with its control characters escaped: a committed symlink's target is anyone's text. */
const shown = escapeControls;

/**
 * The manifest root (checkout + --path), its `.plumb`, `.plumb/status`, the lock beside it and any
 * link in it (an environment's store), and with --path the older layout's `.plumb/status` at the
 * checkout's root (each where it exists) must really be
 * inside the checkout: a symlink committed to the repository (or `..` in --path) would have the
 * controller read manifests, and write its records, anywhere on the host.
 */
async function checkInsideCheckout(
  checkoutDir: string,
  path: string | undefined,
  url: string,
): Promise<void> {
  const realCheckout = await realpath(checkoutDir);
  const root = path ? join(checkoutDir, path) : checkoutDir;
  const storeOf = (dir: string) => [join(dir, ".plumb"), join(dir, ".plumb", "status")];
  const chains = [[root, ...storeOf(root)], ...(path ? [storeOf(checkoutDir)] : [])];
  // Beside the store its lock, and in it the links among its entries: an environment's store
  // (`.plumb/status/ENV`, written as the store is) and its lock (`ENV.lock`).
  const store = join(root, ".plumb", "status");
  const links = (await readdir(store, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isSymbolicLink())
    .map((entry) => [join(store, entry.name)]);
  for (const chain of [...chains, [`${store}.lock`], ...links])
    for (const at of chain) {
      const refuse = (why: string, where = ", outside the checkout") =>
        new PlumbError(
          "path-outside-checkout",
          `--path ${shown(path ?? ".")}: ${shown(relative(checkoutDir, at) || ".")} in the checkout of ${redactUrl(url)} ${why}${where}; the controller reads and writes only inside it: remove the symlink from the branch, or give --path a real directory of the repository`,
        );
      if (isOutside(checkoutDir, resolve(at))) throw refuse("names a directory by '..'");
      if (!(await lstat(at).catch(() => undefined))) break; // not there, nor what is under it
      const real = await realpath(at).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ELOOP")
          throw refuse("is a symlink loop (ELOOP) that never reaches a directory", "");
        throw refuse("is a symlink to nothing (that could be made later)");
      });
      if (isOutside(realCheckout, real)) throw refuse(`leads to ${shown(real)} through a symlink`);
    }
}

/** The first clone of the branch. Stopped (SIGTERM), it ends with every git process it started (stoppable-git.ts). */
async function cloneOnce(options: GitSourceOptions, env: Record<string, string>, checkoutDir: string) {
  const clone = ["clone", "--depth", "1", "--branch", options.branch, "--single-branch", "--"];
  await runStoppableGit([...clone, options.url, checkoutDir], { env, signal: options.signal }).catch(
    (error: unknown) => {
      throw gitFailure("cloning", options.url, error, options.env);
    },
  );
}

export async function openGitSource(options: GitSourceOptions): Promise<GitSource> {
  const checkoutDir = resolve(options.workDir);
  const owned = options.credentials ? undefined : await createGitCredentials(options.env, options.url);
  const { env } = options.credentials ?? owned!;
  const cleanup = async () => owned?.dispose();
  const gitIn = (dir: string): SimpleGit => gitAt(env, dir);
  await mkdir(checkoutDir, { recursive: true });
  let git = gitIn(checkoutDir);
  if (!(await exists(join(checkoutDir, ".git")))) {
    await cloneOnce(options, env, checkoutDir).catch(async (error: unknown) => {
      await cleanup();
      throw error;
    });
    git = gitIn(checkoutDir);
  } else {
    // A checkout from an earlier run: follow the configured remote and branch from here on.
    await git.remote(["set-url", "origin", options.url]);
  }
  try {
    await checkInsideCheckout(checkoutDir, options.path, options.url);
  } catch (error) {
    await cleanup();
    throw error;
  }
  let head = (await git.revparse(["HEAD"])).trim();
  const queue = createCheckoutQueue();
  let fetching: Promise<boolean> | null = null;
  let next: Promise<boolean> | null = null;
  // The last commit refused (its --path leads outside): said again at each poll, never checked out
  // again, so the working tree stays at `head` instead of going to it and back every poll.
  let refused: { commit: string; error: unknown } | undefined;

  // One turn: the fetch, the read of FETCH_HEAD and the reset (another fetch in between would
  // change FETCH_HEAD under it).
  const fetchOnce = (): Promise<boolean> =>
    queue.run(async () => {
      try {
        // Stopped with the controller, a fetch that hangs ends at once (stoppable-git.ts).
        await runStoppableGit(["fetch", "--depth", "1", "origin", options.branch], {
          cwd: checkoutDir,
          env,
          signal: options.signal,
        });
      } catch (error) {
        throw gitFailure("fetching", options.url, error, options.env);
      }
      const fetched = (await git.revparse(["FETCH_HEAD"])).trim();
      if (fetched === head) return false;
      if (refused?.commit === fetched) throw refused.error;
      await git.reset(["--hard", fetched]);
      // A commit whose --path leads outside the checkout is not followed: back to the last one.
      try {
        await checkInsideCheckout(checkoutDir, options.path, options.url);
      } catch (error) {
        await git.reset(["--hard", head]);
        refused = { commit: fetched, error };
        throw error;
      }
      head = fetched;
      return true;
    });

  const start = (): Promise<boolean> => {
    next = null;
    fetching = fetchOnce().finally(() => (fetching = null));
    return fetching;
  };

  return {
    checkoutDir,
    manifestRoot: options.path ? join(checkoutDir, options.path) : checkoutDir,
    commit: () => head,
    queue,
    // Requests while a fetch runs (a webhook during a poll) share one more fetch after it, and each
    // fetch answers for itself. (Run again for as long as requests came in, a poll more frequent than
    // a fetch is long kept one fetch going for ever: a new commit was never answered, nor scanned.)
    async fetch() {
      if (next) return next;
      if (!fetching) return start();
      next = fetching.then(
        () => start(),
        () => start(),
      );
      return next;
    },
    // A fetch the stop ended may run 2 s more (SIGTERM, then SIGKILL): its git is gone before close ends.
    close: async () => {
      if (options.signal?.aborted) await (next ?? fetching)?.catch(() => undefined); // and the one after it
      await cleanup();
    },
  };
}
