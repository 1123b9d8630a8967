import { FileRefused, readRegularFileSync } from "../regular-file.js";

// A setting read from a file (an Environment's `{file: PATH}`, --api-key-file): a key, a URL or a
// tenant id, a few hundred bytes at most. A regular file of at most 64 KiB, opened without blocking
// (regular-file.ts: a FIFO, /dev/stdin or /proc/self/fd/0 blocked the whole process in its read, a
// controller's every environment with it, and /dev/zero or a huge file was read into memory
// without end); a link to one is followed, as Kubernetes mounts secrets. Synchronous, as its
// callers are.

const MAX_SETTING_FILE_BYTES = 64 * 1024;

/** The text of a setting file; throws FileRefused or fs's error. */
export const readSettingFile = (path: string): string =>
  readRegularFileSync(path, { limit: MAX_SETTING_FILE_BYTES, what: "a setting", follow: true });

/** Why `error` (from readSettingFile) happened, in words or as fs's code. */
export const settingFileReason = (error: unknown): string =>
  error instanceof FileRefused ? error.message : ((error as { code?: string } | null)?.code ?? "unreadable");
