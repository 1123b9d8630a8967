/**
 * Every code a PlumbError can carry, in one list (renovate's error-messages.ts is the model).
 * docs/troubleshooting.md "Error codes" has a row with the fix for each; a test keeps the two in step.
 */
export const ERROR_CODES = [
  // settings and usage
  "api-config",
  // an API URL whose origin --allow-api-origin / PLUMB_ALLOWED_API_ORIGINS does not list
  "api-origin-not-allowed",
  "usage",
  "invalid-setting",
  // manifests and files
  "no-manifests",
  "invalid-manifests",
  // two environments whose settings resolve to one control plane name one deployment there (src/cli/environments.ts)
  "environment-name-collision",
  "manifest-unreadable",
  "manifest-write-failed",
  "drift-write-unsafe",
  // a manifest saved by someone else between plumb's read and its write (manifest/write/replace-file.ts)
  "manifest-changed",
  "secret-unresolved",
  "path-not-found",
  "path-not-directory",
  "path-unreadable",
  // the controller's --path (or its .plumb) really leads outside its checkout (git/git-source.ts)
  "path-outside-checkout",
  // a --dir controller's store (.plumb, .plumb/status) is a symlink out of --dir (controller/source/store-inside-dir.ts)
  "store-outside-dir",
  "file-exists",
  // a Node file-system error that names a path, reported by the top-level catch (src/cli/main.ts)
  "io-error",
  // internal_source uploads
  "source-unreadable",
  "source-unsafe-entry",
  "source-too-large",
  "source-changed",
  // plan and apply
  "plan-invalid",
  "plan-stale",
  "plan-duplicate",
  "plan-unreadable",
  "plan-write-failed",
  "plan-environment-mismatch",
  "create-refused",
  "apply-needs-confirmation",
  "adopt-needs-confirmation",
  "prune-limit",
  "revision-not-found",
  "deployment-vanished",
  "no-upload-client",
  "no-platform-client",
  // the agent's checks (spec.verify) after DEPLOYED
  "verify-failed",
  // promotion between environments (plumb promote)
  "promotion-not-configured",
  "promotion-blocked",
  "promotion-unpinned",
  "promotion-edit-failed",
  "promotion-branch-failed",
  // API calls (src/api/errors.ts)
  "bad-request",
  "unauthorized",
  "forbidden",
  "not-found",
  "conflict",
  "validation",
  "rate-limited",
  "server-error",
  "http-error",
  "network",
  "timeout",
  "unexpected-response",
  // status store, lock and git
  "state-corrupt",
  "state-locked",
  "lock-lost",
  "lock-io-error",
  // a store nearby whose lock cannot be taken (not writable): nothing is sent (lock/locks-in-order.ts)
  "nearby-store-unwritable",
  // the command's own store, the same: its lock cannot be taken, the directory not writable (lock/local/local-lock.ts)
  "store-unwritable",
  "status-unreadable",
  // git cannot say which records it tracks (git/records/tracked-records.ts): none is trusted
  "status-tracking-unknown",
  "status-write-failed",
  "status-branch-no-repo",
  "status-branch-is-manifest-branch",
  "status-branch-read-failed",
  "status-branch-push-failed",
  "git-failed",
  // servers (controller, control plane, demo)
  "listen-failed",
  "status-unprotected",
  "data-dir-invalid",
  "journal-write",
  "journal-corrupt",
  "demo-examples-missing",
] as const;

export type PlumbErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);
export const isErrorCode = (value: unknown): value is PlumbErrorCode =>
  typeof value === "string" && KNOWN_CODES.has(value);

/**
 * Typed errors: every failure a user can see carries a stable `code` and a message they can act on.
 * The CLI's single top-level catch maps them to exit codes; nothing deep calls process.exit.
 */
export class PlumbError extends Error {
  readonly code: PlumbErrorCode;
  /** Process exit code when this error reaches the top level. */
  readonly exitCode: number;

  constructor(code: PlumbErrorCode, message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PlumbError";
    this.code = code;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** Bad command-line usage (unknown flag value, missing argument). */
export class UsageError extends PlumbError {
  constructor(message: string) {
    super("usage", message, { exitCode: 64 });
    this.name = "UsageError";
  }
}

export const isPlumbError = (error: unknown): error is PlumbError => error instanceof PlumbError;

const ERRNO_WORDS: Record<string, string> = {
  ENOENT: "does not exist",
  ENOTDIR: "a part of the path is a file, not a directory",
  EISDIR: "is a directory, not a file",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "is on a read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ELOOP: "too many levels of symbolic links",
  EEXIST: "already exists",
  EMFILE: "too many open files",
  ENAMETOOLONG: "the name is too long",
  EINVAL: "cannot be used here (invalid argument)",
  EBUSY: "is busy",
};

/** A Node system error (fs, net) as words: "permission denied (EACCES)". */
export function describeErrno(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!code) return error instanceof Error ? error.message : String(error);
  return `${ERRNO_WORDS[code] ?? "failed"} (${code})`;
}

/** True for a Node system error that names a path: an operator or environment problem, not a bug. */
export const isPathError = (error: unknown): error is NodeJS.ErrnoException & { path: string } =>
  error instanceof Error &&
  typeof (error as NodeJS.ErrnoException).code === "string" &&
  typeof (error as NodeJS.ErrnoException).path === "string";

/** A file-system failure at `path` as a typed error with the fix. */
export const fileError = (code: PlumbErrorCode, path: string, error: unknown, fix: string): PlumbError =>
  new PlumbError(code, `${path}: ${describeErrno(error)}; ${fix}`, { cause: error });

/** Anything thrown, as an Error (kept as it is when it already is one). */
export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

// eslint-disable-next-line no-control-regex -- control characters are what this finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Control characters written as escapes (`\n`, `\u001b`): text read from a file, a repository or a
 * server, printed on one line. Also the characters that reorder a line or break it without a
 * control character (bidirectional overrides, isolates and marks, U+2028/U+2029): `\u202e` in a
 * name showed the rest of the line reversed, as Trojan Source does.
 */
export const escapeControls = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => {
    const json = JSON.stringify(c).slice(1, -1); // `\n`, `\u001b`; DEL and C1 stay as they are there
    return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
