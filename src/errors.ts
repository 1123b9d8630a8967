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
