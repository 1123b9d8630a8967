import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { MAX_MANIFEST_BYTES } from "../parse/parse.js";

// The scan's reader (environment-scan.ts): a file's text read once, bounded, and kept only as the
// two answers the scan needs: does it define `kind: Environment`, does it name environments.

/**
 * `kind: Environment` in a block mapping, or as a key of a flow mapping (`{"kind": "Environment",
 * ...}`, a file written as JSON, which is YAML too), not after a `#` on its line. Only the block form
 * was seen: such an Environment was found by a full load of PATH, never above it (`--env` refused
 * "no kind: Environment document is defined"), and `plumb apply .` took the tree for one without.
 */
const ENVIRONMENT_KIND = /^[^#\n]*?(?:^|[\s{,])["']?kind["']?\s*:\s*["']?Environment["']?\s*(?:[,}#]|$)/m;

/**
 * A file that names environments: `metadata.environments` or an `environments:` overrides map, in
 * block or flow form (`metadata: {name: a, environments: [prod]}`). A false "yes" costs a look up
 * the tree only.
 */
const NAMES_ENVIRONMENTS = /(?:^|[\s{,])["']?environments["']?\s*:/m;

export type ScanOptions = {
  maxBytes?: number;
  /**
   * An environment is asked for by name (--env, a saved plan's), so a file or directory that names
   * none reads those above it too (load.ts environmentRequested).
   */
  requested?: boolean;
  /** A file's text as the scan reads it (tests count the reads); default readUpTo(maxBytes). */
  readText?: (file: string) => string;
};

/** The scan's reader: each file read once (its text kept only as the two answers the scan needs). */
export function scanner(options: ScanOptions) {
  const read = options.readText ?? readUpTo(options.maxBytes ?? MAX_MANIFEST_BYTES);
  const seen = new Map<string, { defines: boolean; names: boolean }>();
  return (file: string) => {
    let found = seen.get(file);
    if (!found) {
      const text = read(file);
      found = { defines: ENVIRONMENT_KIND.test(text), names: NAMES_ENVIRONMENTS.test(text) };
      seen.set(file, found);
    }
    return found;
  };
}
export type Scanner = ReturnType<typeof scanner>;

/**
 * A file's text for the scan, or "" when it cannot be read or is larger than the load accepts
 * (`manifest-too-large`: it is refused there, unread, so nothing in it counts; and a hostile
 * gigabyte file in the tree is not read whole by a scan).
 */
const readUpTo =
  (maxBytes: number) =>
  (file: string): string => {
    let fd: number | undefined;
    try {
      // Without waiting for a writer: a FIFO named *.yaml blocked apply, drift, status and the
      // controller's start for ever in this open. Only a regular file is read (the load says why not).
      fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
      const stats = fstatSync(fd);
      const size = stats.size;
      if (!stats.isFile() || size > maxBytes) return "";
      const bytes = Buffer.allocUnsafe(size);
      let read = 0;
      for (let n = 1; read < size && n > 0; read += n) n = readSync(fd, bytes, read, size - read, read);
      return bytes.toString("utf8", 0, read);
    } catch {
      return "";
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };
