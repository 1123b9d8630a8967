import { readdir, stat } from "node:fs/promises";
import { PlumbError, type PlumbErrorCode } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { ControllerSource } from "../controller-types.js";
import { createGitCredentials } from "../../git/git-credentials.js";
import { openGitSource, redactUrl } from "../../git/git-source.js";
import { type CheckoutQueue, createCheckoutQueue } from "../../git/checkout-queue.js";
import { createGitStop, type GitStop } from "../../git/stoppable-git.js";

// Where the manifests come from: a directory as it is, or a shallow checkout of a git branch.

export type ManifestSource = {
  kind: ControllerSource["kind"];
  /** Directory the manifests are loaded from. */
  manifestRoot: string;
  /** The repository (or directory) the status store belongs to. */
  repoRoot: string;
  /** The checked-out commit (git), null for a directory. */
  commit: () => string | null;
  /** For /status: the directory, or the repository URL without credentials. */
  location: string;
  /** git: fetches and resolves true when a new commit is checked out. Undefined for a directory. */
  fetch: (() => Promise<boolean>) | undefined;
  /** git: the environment (credentials) of every git command, status branch included. */
  gitEnv: Record<string, string> | undefined;
  /**
   * The controller's stop as the status branch's and the lease's git commands over the network see
   * it (stoppable-git.ts): those running end at once, later ones get a few seconds. Undefined
   * without a stop signal (tests that stop the controller by its own call).
   */
  gitStop: GitStop | undefined;
  /**
   * The repository's git queue (git/checkout-queue.ts): the poll, the status branch's fetch and the
   * branch worktrees take turns in it. A directory source has one of its own (no poll; the status
   * branch and worktrees in the user's repository still take turns).
   */
  gitQueue: CheckoutQueue;
  close: () => Promise<void>;
};

export async function openManifestSource(
  source: ControllerSource,
  env: NodeJS.ProcessEnv,
  log: Logger,
  signal?: AbortSignal,
): Promise<ManifestSource> {
  const gitStop = signal ? createGitStop(signal) : undefined;
  if (source.kind === "dir") {
    return {
      kind: "dir",
      manifestRoot: source.dir,
      repoRoot: source.dir,
      commit: () => null,
      location: source.dir,
      fetch: undefined,
      gitEnv: undefined,
      gitStop,
      gitQueue: createCheckoutQueue(),
      close: async () => {},
    };
  }
  const credentials = await createGitCredentials(env, source.url);
  try {
    const git = await openGitSource({ ...source, env, credentials, signal });
    log.info({ repo: redactUrl(source.url), branch: source.branch, revision: git.commit() }, "checked out");
    return {
      kind: "git",
      manifestRoot: git.manifestRoot,
      repoRoot: git.checkoutDir,
      commit: () => git.commit(),
      location: redactUrl(source.url),
      fetch: () => git.fetch(),
      gitEnv: credentials.env,
      gitStop,
      gitQueue: git.queue,
      async close() {
        await git.close();
        await credentials.dispose();
      },
    };
  } catch (error) {
    await credentials.dispose();
    throw error;
  }
}

/**
 * At startup the manifest root must exist and be readable: a typo in --dir (or --path) is fatal, not
 * an empty controller that says "ready". Later a vanished directory is only reported (the scanner).
 */
export async function checkManifestRoot(source: ControllerSource, manifestRoot: string): Promise<void> {
  const flag = source.kind === "dir" ? "--dir" : "--path";
  const fail = (code: PlumbErrorCode, why: string) =>
    new PlumbError(code, `manifest directory ${manifestRoot} ${why}; check ${flag}`);
  const info = await stat(manifestRoot).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") throw fail("path-not-found", "does not exist");
    if (error.code === "ELOOP")
      throw fail("path-unreadable", "is a symlink loop (ELOOP) that never reaches a directory");
    throw fail("path-unreadable", `cannot be read (${error.code ?? error.message})`);
  });
  if (!info.isDirectory()) throw fail("path-not-directory", "is a file, not a directory");
  await readdir(manifestRoot).catch((error: NodeJS.ErrnoException) => {
    throw fail("path-unreadable", `cannot be read (${error.code ?? error.message})`);
  });
}
