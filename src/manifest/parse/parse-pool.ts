import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  KEEP_TREE_OVER_CHARS,
  parseManifestText,
  type ParseResult,
  type PlainDocument,
  withLocators,
} from "./parse.js";
import type { Problem } from "../types.js";
import { readAndParse, readManifestText, type YamlFile } from "./read-file.js";

// Parsing is most of validate's and plan's loading: the `yaml` parser takes ~0.45 ms per manifest
// on one core here (bench/validate.bench.ts). A big tree is cut into contiguous parts, one per
// core: worker threads parse theirs and post plain data back (values, start positions, problems
// and each file's text, from which positions are read again when a message needs one), while the
// main thread parses the first part. Results keep the file order, so output does not change.

const WORKER = new URL("./parse-worker.js", import.meta.url);
/** Below this many files a worker's start (loading the parser, ~50 ms) costs more than it saves. */
export const PARALLEL_MIN_FILES = 400;
const MAX_THREADS = 4;

/** One file's parse as a worker posts it: plain data, or "main" for a file whose tree must stay. */
export type ThreadParse =
  | { file: string; text: string; documents: PlainDocument[]; problems: Problem[] }
  | { problems: Problem[] }
  | "main";

/** Reads and parses one file on a worker (parse-worker.ts). */
export function parseForThread(
  file: YamlFile,
  base: string,
  realBase: string,
  maxBytes: number,
): ThreadParse {
  const read = readManifestText(file, base, realBase, maxBytes);
  if (typeof read === "symbol" || !("text" in read)) return typeof read === "symbol" ? "main" : read;
  // A big file keeps its positional tree (parse.ts), which cannot cross threads: the main thread parses it.
  if (read.text.length > KEEP_TREE_OVER_CHARS) return "main";
  const { documents, problems } = parseManifestText(read.text, read.file);
  const plain = documents.map(({ index, value, locators }) => ({ index, value, start: locators.start }));
  return { file: read.file, text: read.text, documents: plain, problems };
}

/** Reads and parses one file on this thread (no off-thread limit: always a result). */
export const parseOnThisThread = (file: YamlFile, base: string, realBase: string, maxBytes: number) =>
  readAndParse(file, base, realBase, maxBytes) as ParseResult;

const fromThread = (reply: ThreadParse, file: YamlFile, context: Context): ParseResult => {
  if (reply === "main") return parseOnThisThread(file, context.base, context.realBase, context.maxBytes);
  if (!("text" in reply)) return { documents: [], problems: reply.problems };
  return { documents: withLocators(reply.file, reply.text, reply.documents), problems: reply.problems };
};

type Context = { base: string; realBase: string; maxBytes: number };

/** How many threads a parse of `count` files uses: 1 below PARALLEL_MIN_FILES or on one core. */
export const parseThreads = (count: number, cores = availableParallelism()) =>
  count < PARALLEL_MIN_FILES || !existsSync(fileURLToPath(WORKER)) ? 1 : Math.min(cores, MAX_THREADS);

/**
 * Every file's parse, in order, on `threads` threads (this one included). From TypeScript sources
 * (the unit tests) there is no compiled worker and every file is parsed here.
 */
export async function parseFiles(
  files: readonly YamlFile[],
  context: Context,
  threads = parseThreads(files.length),
  /** Filled in when given: how many parts went to workers, and how many of those came back failed. */
  stats?: { workers: number; failed: number },
): Promise<ParseResult[]> {
  const size = Math.ceil(files.length / Math.max(1, threads));
  const parts = Array.from({ length: Math.ceil(files.length / size) || 0 }, (_, i) =>
    files.slice(i * size, (i + 1) * size),
  );
  const [own = [], ...others] = parts;
  const replies = others.map((part) => parseOnWorker(part, context));
  const results = own.map((file) =>
    parseOnThisThread(file, context.base, context.realBase, context.maxBytes),
  );
  for (const [i, reply] of replies.entries()) {
    const part = others[i]!;
    // A worker that failed (it should not) costs time, never a result: its part is parsed here.
    const parsed = await reply.catch(() => undefined);
    if (stats) {
      stats.workers += 1;
      if (!parsed) stats.failed += 1;
    }
    part.forEach((file, k) =>
      results.push(
        parsed
          ? fromThread(parsed[k]!, file, context)
          : parseOnThisThread(file, context.base, context.realBase, context.maxBytes),
      ),
    );
  }
  return results;
}

function parseOnWorker(files: readonly YamlFile[], context: Context): Promise<ThreadParse[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { files, ...context } });
    worker.once("message", (reply: ThreadParse[]) => {
      resolve(reply);
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the parse worker exited (${code})`)));
  });
}
