import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

// A setting read from a file (an Environment's `{file: PATH}`, --api-key-file): a key, a URL or a
// tenant id, a few hundred bytes at most. The file is opened without blocking and must be a
// regular file (a link to one is followed, as Kubernetes mounts secrets) of at most
// MAX_SETTING_FILE_BYTES: a FIFO (or /dev/stdin, /proc/self/fd/0) blocked the whole process in
// its read, a controller's every environment with it, and /dev/zero or a huge file was read into
// memory without end. Synchronous, as its callers are.

const MAX_SETTING_FILE_BYTES = 64 * 1024;

/** Why a setting file was not read: what it is, never what it holds. */
class SettingFileRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

function kindOf(stats: ReturnType<typeof fstatSync>): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** The text of a regular file of at most MAX_SETTING_FILE_BYTES; throws SettingFileRefused or fs's error. */
export function readSettingFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new SettingFileRefused(`${kindOf(stats)}, not a regular file`);
    const limit = MAX_SETTING_FILE_BYTES;
    const tooBig = () => new SettingFileRefused(`larger than ${limit / 1024} KiB, too large for a setting`);
    if (stats.size > limit) throw tooBig();
    // Read one byte past the limit: a file growing after fstat is caught too.
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length <= limit; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > limit) throw tooBig();
    return buffer.toString("utf8", 0, length);
  } finally {
    closeSync(fd);
  }
}

/** Why `error` (from readSettingFile) happened, in words or as fs's code. */
export const settingFileReason = (error: unknown): string =>
  error instanceof SettingFileRefused
    ? error.reason
    : ((error as { code?: string } | null)?.code ?? "unreadable");
