import { PlumbError } from "../../errors.js";
import type { Problem } from "../types.js";
import { fileStart, problemAt } from "./parse-problems.js";

// A manifest file's bytes before they are parsed: the size limit (PLUMB_MAX_MANIFEST_BYTES) and
// strict UTF-8.

/** Files over this size are refused unread: manifests are small, and YAML parsing is not free. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Raises or lowers MAX_MANIFEST_BYTES for validate, plan, apply, drift and the controller. */
const MAX_MANIFEST_BYTES_ENV = "PLUMB_MAX_MANIFEST_BYTES";

/** The manifest size limit an environment asks for; a value that is not a positive integer is an error. */
export function maxManifestBytesFrom(env: NodeJS.ProcessEnv): number {
  const text = env[MAX_MANIFEST_BYTES_ENV];
  if (text === undefined || text === "") return MAX_MANIFEST_BYTES;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new PlumbError(
      "invalid-setting",
      `${MAX_MANIFEST_BYTES_ENV} must be a positive number of bytes, not "${text}"`,
      { exitCode: 1 },
    );
  return value;
}

// One decoder for every file: without `stream` a decode keeps no state between calls.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes file bytes as strict UTF-8 (a BOM is dropped); invalid bytes become a problem. */
export function decodeManifestBytes(
  bytes: Uint8Array,
  file: string,
  maxBytes = MAX_MANIFEST_BYTES,
): { text: string } | { problem: Problem } {
  if (bytes.byteLength > maxBytes) {
    return { problem: tooLarge(file, bytes.byteLength, maxBytes) };
  }
  try {
    return { text: STRICT_UTF8.decode(bytes) };
  } catch {
    return {
      problem: problemAt(fileStart(file), "error", "invalid-encoding", "", "file is not valid UTF-8 text"),
    };
  }
}

export const tooLarge = (file: string, size: number, maxBytes = MAX_MANIFEST_BYTES): Problem =>
  problemAt(
    fileStart(file),
    "error",
    "manifest-too-large",
    "",
    `file is ${size} bytes, over the ${maxBytes}-byte limit for manifests; it is not read (${MAX_MANIFEST_BYTES_ENV} changes the limit)`,
  );
