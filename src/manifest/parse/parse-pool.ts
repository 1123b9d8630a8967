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

// Parsing is most of validate's and plan's loading (`yaml` 3: ~0.1 ms per manifest on one core
// here, bench/validate.bench.ts). A big tree is parsed on several threads: the files are cut into
// chunks, and the main thread and the workers each take the next chunk not yet taken (one shared
// counter), so a worker that starts late (loading the parser takes ~0.1-0.2 s) or a slower core
// gets less, and nobody waits for a fixed half. Workers post each chunk as plain data (values,
// start positions, problems and each file's text, from which positions are read again when a
// message needs one); the main thread takes them in between its own chunks. Results keep the file
// order, so output does not change. The main thread parses the first chunk before any worker
// starts, and a tree of plain manifests (line-compose.ts) is parsed on it alone: see PLAIN_SHARE.

const WORKER = new URL("./parse-worker.js", import.meta.url);
/** Below this many files a worker's start (loading the parser, 0.1-0.2 s) costs more than it saves. */
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
  const plain = documents.map(({ index, value, locators, plainText }): PlainDocument => {
    const document: PlainDocument = { index, value, start: locators.start };
    if (plainText) document.plainText = true;
    return document;
  });
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
 * When this share of the first chunk's files are plain manifests (ParsedDocument.plainText: read
 * by line-compose.ts, ~50 µs a file warm), the tree is parsed on this thread alone and no worker
 * starts (a pool given is ended): a worker's result costs this thread ~0.6 of parsing it (the structured clone of its values,
 * measured on the bench's files), and the workers' start, cold code and copying took ~0.4 s of CPU
 * for 10,000 files, about as much as parsing and validating all of them here (docs/manifests.md
 * "Speed"). Files yaml parses (several documents, anchors, multi-line or non-ASCII text...) cost
 * 3-5 times as much: their workers start then.
 */
const PLAIN_SHARE = 0.9;
const mostlyPlain = (results: readonly ParseResult[]) =>
  results.filter((r) => r.documents.length > 0 && r.documents.every((d) => d.plainText)).length >=
  PLAIN_SHARE * results.length;

/** Files per chunk: small enough to share out evenly, large enough that a message carries real work. */
export const CHUNK_FILES = 100;

/** A chunk a worker parsed, as it posts it (parse-worker.ts); `done` when it found no chunk left. */
export type ChunkReply = { chunk: number; parses: ThreadParse[] } | { done: true };

/** What a started worker is sent once the tree is listed: the files, and how to read them. */
export type WorkerJob = Context & { files: readonly YamlFile[]; chunkFiles: number };

/** Where `parseFiles` counts what it did, when given. */
export type ParseStats = { workers: number; failed: number; chunksOnWorkers: number };

/**
 * Worker threads started before their files are known (startParsePool), sharing one chunk counter:
 * loading a worker's parser takes 0.1-0.2 s, which the listing of a big tree can hide.
 */
export type ParsePool = { next: Int32Array; workers: PoolWorker[] };

type PoolWorker = {
  worker: Worker;
  /** True when the worker ran out of chunks; false when it failed (its chunks are parsed here). */
  ended: Promise<boolean>;
  onChunk?: (chunk: number, parses: ThreadParse[]) => void;
};

/** Starts `count` workers that wait for their job (parseFiles gives it). */
export function startParsePool(count: number, script: URL = WORKER): ParsePool {
  const next = new Int32Array(new SharedArrayBuffer(4));
  return { next, workers: Array.from({ length: count }, () => startWorker(script, next)) };
}

/** Ends a pool's workers without a job (the listing failed, or the tree turned out small). */
export function stopParsePool(pool: ParsePool): void {
  for (const { worker } of pool.workers) void worker.terminate();
}

function startWorker(script: URL, next: Int32Array): PoolWorker {
  const worker = new Worker(script, { workerData: { next } });
  const handle: PoolWorker = { worker, ended: Promise.resolve(false) };
  handle.ended = new Promise((resolve) => {
    worker.on("message", (reply: ChunkReply) => {
      if ("done" in reply) {
        resolve(true);
        void worker.terminate();
      } else handle.onChunk?.(reply.chunk, reply.parses);
    });
    // Listened to from the start: a worker that fails before its job is a worker that failed.
    worker.once("error", () => resolve(false));
    worker.once("exit", () => resolve(false));
  });
  return handle;
}

export type ParseOptions = {
  stats?: ParseStats;
  /** False: only workers parse (a test sees them at work). */
  here?: boolean;
  /** Files per chunk (CHUNK_FILES). */
  chunkFiles?: number;
  /** The workers' script (parse-worker.js); a test gives one that fails. */
  worker?: URL;
  /** Workers already started (startParsePool), used instead of starting `threads` of them here. */
  pool?: ParsePool;
  /** Given the results in file order, a run of files at a time, as soon as they are all parsed. */
  inOrder?: (results: readonly ParseResult[]) => void;
};

/**
 * Every file's parse, in order, on `threads` threads (this one included, unless `options.here` is
 * false), or on this one and `options.pool`'s. From TypeScript sources (the unit tests) there is
 * no compiled worker and every file is parsed here.
 */
export async function parseFiles(
  files: readonly YamlFile[],
  context: Context,
  threads = parseThreads(files.length),
  options: ParseOptions = {},
): Promise<ParseResult[]> {
  const { stats, here = true, inOrder, chunkFiles: size = CHUNK_FILES } = options;
  const chunks = Math.ceil(files.length / size);
  const parseHere = (file: YamlFile) =>
    parseOnThisThread(file, context.base, context.realBase, context.maxBytes);
  if (threads <= 1 || chunks <= 1) {
    if (options.pool) stopParsePool(options.pool);
    const all = files.map(parseHere);
    inOrder?.(all);
    return all;
  }
  const parsed = new Array<ParseResult[] | undefined>(chunks);
  let handedOn = 0; // chunks given to inOrder so far: each as soon as all before it are parsed
  const handOn = () => {
    for (; handedOn < chunks && parsed[handedOn]; handedOn++) inOrder?.(parsed[handedOn]!);
  };
  const chunkFiles = (chunk: number) => files.slice(chunk * size, (chunk + 1) * size);
  if (here) {
    // The first chunk is parsed here before any worker starts: a tree of plain manifests is then
    // parsed here alone (PLAIN_SHARE), and no worker costs it anything.
    parsed[0] = chunkFiles(0).map(parseHere);
    handOn();
    if (mostlyPlain(parsed[0])) {
      if (options.pool) stopParsePool(options.pool);
      for (let chunk = 1; chunk < chunks; chunk++) parsed[chunk] = chunkFiles(chunk).map(parseHere);
      handOn();
      return parsed.flat() as ParseResult[];
    }
  }
  const pool = options.pool ?? startParsePool(here ? threads - 1 : threads, options.worker);
  // Next chunk to take, shared with the workers: Atomics.add hands each chunk to one thread. The
  // workers read it only once they have their job (below): the first chunk is taken already.
  const { next } = pool;
  if (here) Atomics.store(next, 0, 1);
  const job: WorkerJob = { files, ...context, chunkFiles: size };
  for (const handle of pool.workers) {
    handle.onChunk = (chunk, parses) => {
      parsed[chunk] = chunkFiles(chunk).map((file, k) => fromThread(parses[k]!, file, context));
      if (stats) stats.chunksOnWorkers += 1;
      handOn();
    };
    handle.worker.postMessage(job);
  }
  if (stats) stats.workers += pool.workers.length;
  for (let chunk = here ? Atomics.add(next, 0, 1) : chunks; chunk < chunks; chunk = Atomics.add(next, 0, 1)) {
    parsed[chunk] = chunkFiles(chunk).map(parseHere);
    handOn();
    // Lets the workers' chunks in (their messages) between ours, instead of all at the end.
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const handle of pool.workers) {
    // A worker that failed (it should not) costs time, never a result: its chunks are parsed here.
    const ok = await handle.ended;
    if (!ok && stats) stats.failed += 1;
  }
  for (let chunk = 0; chunk < chunks; chunk++) parsed[chunk] ??= chunkFiles(chunk).map(parseHere);
  handOn();
  return parsed.flat() as ParseResult[];
}
