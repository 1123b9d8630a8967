/**
 * Typed errors: every failure a user can see carries a stable `code` and a message they can act on.
 * The CLI's single top-level catch maps them to exit codes; nothing deep calls process.exit.
 */
export class PlumbError extends Error {
  readonly code: string;
  /** Process exit code when this error reaches the top level. */
  readonly exitCode: number;

  constructor(code: string, message: string, options: { exitCode?: number; cause?: unknown } = {}) {
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
export const fileError = (code: string, path: string, error: unknown, fix: string): PlumbError =>
  new PlumbError(code, `${path}: ${describeErrno(error)}; ${fix}`, { cause: error });

/** Anything thrown, as an Error (kept as it is when it already is one). */
export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
